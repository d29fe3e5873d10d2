package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	// ErrPayoutsNotSupported: the acquirer cannot send Pix out.
	ErrPayoutsNotSupported = errors.New("the acquirer cannot send payouts")
	// ErrPayoutExceedsAvailable: the available balance cannot cover a new
	// payout's amount and fee (it is domain.ErrInsufficientBalance too).
	ErrPayoutExceedsAvailable = fmt.Errorf("payout: %w", domain.ErrInsufficientBalance)
	// ErrPayoutNoDefaultKey: a sub-account's payout named no destination
	// and the sub-account has no payout_pix_key to default to.
	ErrPayoutNoDefaultKey = errors.New("the sub-account has no payout pix key")
)

// PayoutsConfig tunes the payout service.
type PayoutsConfig struct {
	// PixOutFee is the default fee of a payout (QUITA_FEE_PIX_OUT); an
	// account's PIX_OUT override (`quitad fees set --method PIX_OUT`)
	// replaces it.
	PixOutFee domain.Fee
	// Recheck is how long a payout the PSP is working on waits before the
	// worker asks the PSP again, in case its notification was lost
	// (default 30 s).
	Recheck time.Duration
}

// PayoutService creates payouts, sends them through the acquirer's Pix-out
// capability and applies the PSP's answers.
type PayoutService struct {
	charges  *ChargeService
	store    ports.PayoutStore
	acquirer acquirer
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      PayoutsConfig
	// wake is signalled when a payout commits in this process, so the
	// worker sends it at once.
	wake chan struct{}
	// alerts counts what an operator must look at (Alerts).
	alerts payoutAlerts
	// once is the charge service's runner: payouts share its key space.
	once *exactlyonce.Runner
}

// NewPayoutService wires the payout service. It shares the charge
// service's exactly-once runner (one key space) and fee schedule.
func NewPayoutService(charges *ChargeService, store ports.PayoutStore, acquirer ports.Acquirer, clock ports.Clock,
	ids ports.IDGenerator, log *slog.Logger, cfg PayoutsConfig,
) *PayoutService {
	if cfg.Recheck <= 0 {
		cfg.Recheck = 30 * time.Second
	}
	return &PayoutService{charges: charges, once: charges.once, store: store, acquirer: acquirerOf(acquirer), clock: clock, ids: ids, log: log,
		cfg: cfg, wake: make(chan struct{}, 1)}
}

// Wake is signalled each time a payout commits in this process.
func (s *PayoutService) Wake() <-chan struct{} { return s.wake }

// CreatePayoutInput is a payout request after decoding.
type CreatePayoutInput struct {
	Amount int64
	// PixKey "" pays a sub-account to its payout_pix_key (defaultKey).
	PixKey      string
	KeyType     domain.PixKeyType
	Description string
	Metadata    map[string]any
}

// Create makes a payout exactly once per idempotency key (the same rules
// as a charge: replay, 409 reused, 409 in use). In one transaction it
// writes the idempotency record, the payout, its events and the entry that
// moves amount and fee from available into the payout hold; a wallet that
// cannot cover it refuses the whole (domain.ErrInsufficientBalance) and no
// payout exists. Nothing is sent here: the worker sends committed payouts.
func (s *PayoutService) Create(ctx context.Context, caller Caller, in CreatePayoutInput, idem Idempotency, respond Respond[*domain.Payout]) (Response, error) {
	return s.once.Do(ctx, caller.Scope(), idem, exactlyonce.Options{}, func(a *exactlyonce.Attempt) (Response, error) {
		return s.create(ctx, caller, in, a, respond)
	})
}

// coveredDespiteDebt refuses a payout a wallet in debt (owed, from
// disputes) cannot cover from what is left of available once the debt is
// counted: money owed to Quita never leaves by payout. A wallet without
// debt is left to the store's non-negative check, which concurrent creates
// cannot overdraw.
func (s *PayoutService) coveredDespiteDebt(ctx context.Context, scope ports.Scope, p *domain.Payout) error {
	ws, err := s.store.Wallets(ctx, scope)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if w.Currency == p.Snapshot().Currency && w.Owed > 0 && w.Available-w.Owed < p.Debit() {
			return ErrPayoutExceedsAvailable
		}
	}
	return nil
}

func (s *PayoutService) create(ctx context.Context, caller Caller, in CreatePayoutInput, a *exactlyonce.Attempt, respond Respond[*domain.Payout]) (Response, error) {
	key := a.Key
	pixKey, err := s.destination(ctx, caller, in)
	if err != nil {
		return Response{}, err
	}
	fee, err := s.fee(ctx, caller.Account.ID, in.Amount)
	if err != nil {
		return Response{}, err
	}
	id, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	now := s.clock.Now()
	p, err := domain.NewPayout(domain.NewPayoutParams{ID: id, AccountID: key.AccountID, Mode: key.Mode, Amount: in.Amount, Fee: fee,
		Key: pixKey, Description: in.Description, Metadata: in.Metadata, SendID: PayoutSendID(key), Now: now})
	if err != nil {
		return Response{}, err
	}
	evs, err := domain.NewPayoutEvents(p, "", s.ids.NewID, now)
	if err != nil {
		return Response{}, err
	}
	eid, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	if err := s.coveredDespiteDebt(ctx, caller.Scope(), p); err != nil {
		return Response{}, err
	}
	answer, err := respond(p)
	if err != nil {
		return Response{}, err
	}
	rec := a.Record(id, answer, now)
	err = s.store.CreatePayout(ctx, p, evs, []domain.JournalEntry{domain.PayoutEntry(eid, p, now)}, rec)
	if errors.Is(err, domain.ErrInsufficientBalance) {
		return Response{}, ErrPayoutExceedsAvailable
	}
	if err != nil {
		return Response{}, err
	}
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
	s.log.InfoContext(ctx, "payout created", "payout", domain.PrefixPayout+id, "amount", in.Amount, "mode", string(key.Mode))
	return Response{StatusCode: rec.StatusCode, Body: rec.Body}, nil
}

// destination is the key a payout goes to: the one named, or for a
// sub-account that names none its payout_pix_key, read from the store
// (not the caller's copy, which the authentication cache may hold for a
// second after an update). ErrPayoutNoDefaultKey for a sub-account
// without one; any other account must name a key (FieldPixKey missing).
func (s *PayoutService) destination(ctx context.Context, caller Caller, in CreatePayoutInput) (domain.PixKey, error) {
	if in.PixKey != "" || !caller.Account.IsSubaccount() {
		if in.PixKey == "" {
			return domain.PixKey{}, domain.Missing(domain.FieldPixKey)
		}
		return domain.ParsePixKey(in.PixKey, in.KeyType)
	}
	acct := caller.Account
	if subs := s.charges.cfg.Subaccounts; subs != nil {
		a, err := subs.GetSubaccount(ctx, acct.ParentAccountID, acct.ID)
		if err != nil {
			return domain.PixKey{}, err
		}
		acct = *a
	}
	if acct.PayoutPixKey.Value == "" {
		return domain.PixKey{}, ErrPayoutNoDefaultKey
	}
	return acct.PayoutPixKey, nil
}

// PayoutSendID is the PSP's id of the Pix a payout sends (Efí's idEnvio),
// derived from the create's idempotency scope as a charge's txid is: a
// retry of the create, or of the send after any crash, names the same Pix,
// which the PSP sends at most once.
func PayoutSendID(key ports.IdempotencyKey) string {
	return domain.DeriveTxID("payout", key.AccountID, string(key.Mode), key.Key)
}

// fee is the Pix-out fee of amount for the account (pixOutSchedule).
func (s *PayoutService) fee(ctx context.Context, accountID string, amount int64) (int64, error) {
	sched, err := s.charges.pixOutSchedule(ctx, accountID, s.cfg.PixOutFee)
	if err != nil {
		return 0, err
	}
	return domain.PixOutFee(sched, amount), nil
}

// Get reads a payout of the caller.
func (s *PayoutService) Get(ctx context.Context, caller Caller, id string) (*domain.Payout, error) {
	return s.store.GetPayout(ctx, caller.Scope(), id)
}

// List lists the caller's payouts, newest first.
func (s *PayoutService) List(ctx context.Context, q ports.PayoutQuery) ([]*domain.Payout, bool, error) {
	return s.store.ListPayouts(ctx, q)
}

// Cancel closes a payout that was not sent yet and gives its hold back.
// domain.ErrPayoutNotCancellable once the worker started sending it.
func (s *PayoutService) Cancel(ctx context.Context, caller Caller, id string) (*domain.Payout, error) {
	return s.move(ctx, caller.Scope(), id, func(p *domain.Payout, now time.Time) error { return p.Cancel(now) })
}

// move applies change to the locked payout and writes, in the same
// transaction, the events of its status move and the ledger entry that
// goes with it.
func (s *PayoutService) move(ctx context.Context, scope ports.Scope, id string, change func(*domain.Payout, time.Time) error) (*domain.Payout, error) {
	var out *domain.Payout
	err := s.store.UpdatePayout(ctx, scope, id, func(_ context.Context, p *domain.Payout) (ports.PayoutChange, error) {
		ch, err := s.change(p, time.Time{}, change)
		if err != nil {
			return ports.PayoutChange{}, err
		}
		out = p
		return ch, nil
	})
	return out, err
}

// change applies change to p now and returns what goes with it into the
// same transaction: the events of its status move, the ledger entry that
// goes with that move, and recheck (when set) as its next lease.
func (s *PayoutService) change(p *domain.Payout, recheck time.Time, change func(*domain.Payout, time.Time) error) (ports.PayoutChange, error) {
	prev := p.Status()
	now := s.clock.Now()
	if err := change(p, now); err != nil {
		return ports.PayoutChange{}, err
	}
	evs, err := domain.NewPayoutEvents(p, prev, s.ids.NewID, now)
	if err != nil {
		return ports.PayoutChange{}, err
	}
	ch := ports.PayoutChange{Events: evs, RecheckAt: recheck}
	eid, err := s.ids.NewID()
	if err != nil {
		return ports.PayoutChange{}, err
	}
	if e, ok := domain.PayoutEntryFor(eid, p, prev, now); ok {
		ch.Entries = append(ch.Entries, e)
	}
	return ch, nil
}

// PayTestPayout is the test helper that settles an open test-mode payout
// as the PSP would, with a sandbox end-to-end id.
func (s *PayoutService) PayTestPayout(ctx context.Context, caller Caller, id string) (*domain.Payout, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ErrTestModeOnly
	}
	if _, err := s.store.GetPayout(ctx, caller.Scope(), id); err != nil {
		return nil, err
	}
	e2e, err := domain.NewEndToEndID("99999999", s.clock.Now(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return s.move(ctx, caller.Scope(), id, func(p *domain.Payout, now time.Time) error { return p.MarkPaid(e2e, now) })
}

// FailTestPayout is the test helper that fails an open test-mode payout
// with code (one of domain.PayoutFailureCodes), releasing its hold.
func (s *PayoutService) FailTestPayout(ctx context.Context, caller Caller, id, code string) (*domain.Payout, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ErrTestModeOnly
	}
	if _, err := s.store.GetPayout(ctx, caller.Scope(), id); err != nil {
		return nil, err
	}
	if domain.PayoutFailureMessage(code) == "" {
		return nil, domain.Invalid(domain.FieldFailureCode, "%s must be one of invalid_key, account_closed, insufficient_funds_at_psp, rejected_by_psp, expired", domain.FieldFailureCode)
	}
	return s.move(ctx, caller.Scope(), id, func(p *domain.Payout, now time.Time) error { return p.MarkFailed(code, now) })
}
