package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	// ErrNoProviderReference: the charge never reached a provider.
	ErrNoProviderReference = errors.New("TRANSACTION_HAS_NO_PROVIDER_REFERENCE")
	// ErrReceiptUnavailable: no receipt exists for an unsettled charge or
	// a provider without receipts.
	ErrReceiptUnavailable = errors.New("receipt unavailable")
)

// PaymentsConfig tunes the payments surface.
type PaymentsConfig struct {
	Links domain.Links
	// PixOutFee is what a cashout refund costs when passFeeToTenant is set.
	PixOutFee domain.Fee
}

// PaymentService is the payments surface: refunds, lists, stats, wallets
// and the ledger, on the charges of ChargeService.
type PaymentService struct {
	charges  *ChargeService
	store    ports.PaymentStore
	cstore   ports.ChargeStore
	acquirer acquirer
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      PaymentsConfig
}

// NewPaymentService wires the payments surface.
func NewPaymentService(charges *ChargeService, store ports.PaymentStore, cstore ports.ChargeStore, acquirer ports.Acquirer,
	clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg PaymentsConfig,
) *PaymentService {
	return &PaymentService{charges: charges, store: store, cstore: cstore, acquirer: acquirerOf(acquirer), clock: clock, ids: ids, log: log, cfg: cfg}
}

// Charges is the charge service underneath.
func (s *PaymentService) Charges() *ChargeService { return s.charges }

// List returns a page of payments and the total.
// A payment past its expiry reads as EXPIRED (and is persisted so), as
// on a single read.
func (s *PaymentService) List(ctx context.Context, q ports.PaymentQuery) ([]*domain.Charge, int, error) {
	cs, total, err := s.store.ListPayments(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	now := s.clock.Now()
	for i, c := range cs {
		if c.ExpiredAt(now) {
			if cs[i], err = s.charges.expireIfDue(ctx, q.Scope, c); err != nil {
				return nil, 0, err
			}
		}
	}
	return cs, total, nil
}

// Cancel closes an unsettled payment and removes its cob at the acquirer.
func (s *PaymentService) Cancel(ctx context.Context, caller Caller, id string) (*domain.Charge, error) {
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	c, err := s.charges.update(ctx, caller.Scope(), id, func(c *domain.Charge) error { return c.Cancel(s.clock.Now()) })
	if err != nil {
		return nil, err
	}
	if p := c.Pix(); p != nil {
		err := s.acquirer.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: caller.Scope(), ChargeID: id, TxID: p.TxID})
		if err != nil {
			// The cob expires on its own; a payment arriving meanwhile
			// finds a closed charge and is returned.
			s.log.WarnContext(ctx, "cancel at the acquirer failed", "charge", domain.PrefixCharge+id, "err", err)
		}
	}
	return c, nil
}

// RefundInput is a refund request after decoding.
type RefundInput struct {
	Amount          *int64
	Reason          string
	Strategy        domain.RefundStrategy
	PassFeeToTenant bool
	DestinationKey  string
}

// Refund creates a refund exactly once per idempotency key: the key's
// record, the refund, its ledger debit and the reservation on the charge
// are written in one transaction under the charge's row lock, so
// concurrent refunds can never exceed the amount.
func (s *PaymentService) Refund(ctx context.Context, caller Caller, id string, in RefundInput, idem Idempotency, respond Respond[domain.Refund]) (Response, error) {
	key := ports.IdempotencyKey{Scope: caller.Scope(), Key: idem.Key}
	if resp, err := s.charges.replay(ctx, key, idem.Fingerprint); err == nil || !errors.Is(err, ports.ErrNotFound) {
		return resp, err
	}
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return Response{}, err
	}
	var (
		answer   Response
		computed bool
		err      error
	)
	// The wallet is read without a lock; the store refuses a debit that a
	// concurrent one made stale (ErrInsufficientBalance after the entry was
	// computed from a sufficient read), and a fresh read decides again.
	for range 5 {
		computed = false
		err = s.cstore.UpdateCharge(ctx, caller.Scope(), id, s.refundChange(in, idem, key, respond, &answer, &computed))
		if !computed || !errors.Is(err, domain.ErrInsufficientBalance) {
			break
		}
	}
	if errors.Is(err, ports.ErrIdempotencyKeyExists) {
		return s.charges.replay(ctx, key, idem.Fingerprint)
	}
	if err != nil {
		return Response{}, err
	}
	return Response{StatusCode: answer.StatusCode, Body: answer.Body}, nil
}

// refundChange is the change of one refund attempt.
func (s *PaymentService) refundChange(in RefundInput, idem Idempotency, key ports.IdempotencyKey, respond Respond[domain.Refund],
	answer *Response, computed *bool,
) ports.ChargeChangeFunc {
	return func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		now := s.clock.Now()
		amount := c.RefundableAmount()
		if in.Amount != nil {
			amount = *in.Amount
		}
		st := c.Settlement()
		if st == nil || !c.Status().Settled() {
			return ports.ChargeChange{}, domain.ErrChargeNotRefundable
		}
		strategy := in.Strategy
		if st.PaidWith == domain.MethodPix && strategy == "" {
			strategy = domain.StrategyCashout
		}
		if st.PaidWith == domain.MethodPix && strategy == domain.StrategyCashout && !s.acquirer.supportsCashout(key.Scope) {
			if in.Strategy != "" {
				return ports.ChargeChange{}, ErrCashoutNotSupported
			}
			strategy = domain.StrategyDevolution // the provider's only way back
		}
		if st.PaidWith != domain.MethodPix && strategy != "" {
			return ports.ChargeChange{}, domain.Invalid(domain.FieldRefundStrategy,
				"%s applies to PIX refunds only", domain.FieldRefundStrategy)
		}
		if err := c.ReserveRefund(amount, now); err != nil {
			return ports.ChargeChange{}, err
		}
		rid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		r := domain.Refund{ID: rid, ChargeID: c.ID(), AccountID: c.AccountID(), Mode: c.Mode(), Amount: amount,
			Currency: c.Currency(), Status: domain.RefundPending, Reason: in.Reason, Strategy: strategy,
			PassFeeToTenant: in.PassFeeToTenant, DestinationKey: in.DestinationKey, EndToEndID: st.EndToEndID,
			CreatedAt: now, UpdatedAt: now}
		if strategy == domain.StrategyCashout && in.PassFeeToTenant {
			r.Fee = s.cfg.PixOutFee.Of(amount)
		}
		bal, err := tx.Balance(ctx, c.Currency())
		if err != nil {
			return ports.ChargeChange{}, err
		}
		eid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		entry, err := domain.RefundEntry(eid, r, bal, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		*computed = true
		evid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		ev, err := domain.RefundEvent(c, r, evid, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		if *answer, err = respond(r); err != nil {
			return ports.ChargeChange{}, err
		}
		return ports.ChargeChange{Events: []domain.Event{ev}, Entries: []domain.JournalEntry{entry}, Refunds: []domain.Refund{r},
			Idempotency: &ports.IdempotencyRecord{IdempotencyKey: key, Fingerprint: idem.Fingerprint, ResourceID: rid,
				StatusCode: answer.StatusCode, Body: answer.Body, CreatedAt: now}}, nil
	}
}

// FinalizePendingMethods is the recovery worker of method data: charges
// still pending a second after create (the process died, or the acquirer
// failed) are finalised now.
func (s *PaymentService) FinalizePendingMethods(ctx context.Context) (int, error) {
	refs, err := s.store.ListMethodsPending(ctx, s.clock.Now().Add(-time.Second), workerBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range refs {
		if err := s.charges.FinalizeMethods(ctx, r.Scope, r.ID); err != nil {
			s.log.WarnContext(ctx, "method data not finalised; will retry", "charge", domain.PrefixCharge+r.ID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// ListRefunds returns a payment's refunds, newest first.
func (s *PaymentService) ListRefunds(ctx context.Context, caller Caller, id string) ([]domain.Refund, error) {
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	return s.store.ListRefunds(ctx, caller.Scope(), id)
}

// AdvanceRefunds moves every open refund one step with the acquirer:
// PENDING → IN_PROGRESS once the acquirer accepted it, IN_PROGRESS →
// REFUNDED or FAILED as the acquirer reports. Each step is written with
// its payment.refunded event and ledger entry under the charge's lock;
// safe in every process at once.
func (s *PaymentService) AdvanceRefunds(ctx context.Context) (int, error) {
	refs, err := s.store.ListOpenRefunds(ctx, workerBatch)
	if err != nil {
		return 0, err
	}
	ra := s.acquirer.refunds
	if ra == nil {
		return 0, nil
	}
	n := 0
	for _, ref := range refs {
		r, err := s.store.FindRefund(ctx, ref.Scope, ref.RefundID)
		if err != nil {
			return n, err
		}
		switch r.Status {
		case domain.RefundPending:
			c, err := s.cstore.GetCharge(ctx, ref.Scope, r.ChargeID)
			if err != nil {
				return n, err
			}
			method := domain.MethodPix
			if st := c.Settlement(); st != nil {
				method = st.PaidWith
			}
			pref, err := ra.Refund(ctx, ports.RefundRequest{Scope: ref.Scope, ChargeID: r.ChargeID, RefundID: r.ID, Method: method,
				Strategy: r.Strategy, EndToEndID: r.EndToEndID, Amount: r.Amount, DestinationKey: r.DestinationKey})
			if err != nil {
				s.log.WarnContext(ctx, "refund not accepted yet; will retry", "refund", domain.PrefixRefund+r.ID, "err", err)
				continue
			}
			err = s.stepRefund(ctx, ref.Scope, r.ChargeID, r.ID, domain.RefundInProgress, pref)
			if err != nil && !errors.Is(err, domain.ErrRefundNotOpen) && !errors.Is(err, domain.ErrInvalidTransition) {
				return n, err
			}
		case domain.RefundInProgress:
			st, err := ra.RefundStatus(ctx, r.ProviderRef)
			if err != nil {
				continue
			}
			to := domain.RefundStatus(st)
			if to != domain.RefundRefunded && to != domain.RefundFailed {
				continue
			}
			err = s.stepRefund(ctx, ref.Scope, r.ChargeID, r.ID, to, "")
			if err != nil && !errors.Is(err, domain.ErrRefundNotOpen) && !errors.Is(err, domain.ErrInvalidTransition) {
				return n, err
			}
		}
		n++
	}
	return n, nil
}

// FailRefund is the test helper that forces an open refund to FAILED.
func (s *PaymentService) FailRefund(ctx context.Context, caller Caller, refundID string) (domain.Refund, error) {
	if caller.Mode != domain.ModeTest {
		return domain.Refund{}, ErrTestModeOnly
	}
	r, err := s.store.FindRefund(ctx, caller.Scope(), refundID)
	if err != nil {
		return domain.Refund{}, err
	}
	if err := s.stepRefund(ctx, caller.Scope(), r.ChargeID, r.ID, domain.RefundFailed, ""); err != nil {
		return domain.Refund{}, err
	}
	out, err := s.store.FindRefund(ctx, caller.Scope(), refundID)
	if err != nil {
		return domain.Refund{}, err
	}
	return *out, nil
}

// stepRefund moves a refund to status to under its charge's lock, with
// the ledger entry and charge change the step implies.
func (s *PaymentService) stepRefund(ctx context.Context, scope ports.Scope, chargeID, refundID string, to domain.RefundStatus, providerRef string) error {
	return s.cstore.UpdateCharge(ctx, scope, chargeID, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		r, err := tx.GetRefund(ctx, refundID)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		now := s.clock.Now()
		if err := r.Advance(to, now); err != nil {
			return ports.ChargeChange{}, err
		}
		if providerRef != "" {
			r.ProviderRef = providerRef
		}
		var ch ports.ChargeChange
		prev := c.Status()
		eid, err := s.ids.NewID()
		if err != nil {
			return ch, err
		}
		switch to {
		case domain.RefundRefunded:
			if err := c.CompleteRefund(r.Amount, now); err != nil {
				return ch, err
			}
			ch.Entries = append(ch.Entries, domain.RefundSettledEntry(eid, *r, now))
		case domain.RefundFailed:
			if err := c.ReleaseRefund(r.Amount, now); err != nil {
				return ch, err
			}
			ch.Entries = append(ch.Entries, domain.RefundFailedEntry(eid, *r, now))
		}
		evid, err := s.ids.NewID()
		if err != nil {
			return ch, err
		}
		ev, err := domain.RefundEvent(c, *r, evid, now)
		if err != nil {
			return ch, err
		}
		ch.Events = append(ch.Events, ev)
		if c.Status() != prev {
			evs, err := domain.NewChargeEvents(c, prev, transitionWithoutRefundDuplicate(prev, c.Status()), s.cfg.Links, s.ids.NewID, now)
			if err != nil {
				return ch, err
			}
			ch.Events = append(ch.Events, evs...)
		}
		ch.Refunds = []domain.Refund{*r}
		return ch, nil
	})
}

// transitionWithoutRefundDuplicate drops payment.refunded from a full
// refund's transition events: the refund step already announced it.
func transitionWithoutRefundDuplicate(from, to domain.TxStatus) []domain.EventType {
	var out []domain.EventType
	for _, t := range domain.TransitionEvents(from, to) {
		if t != domain.EventPaymentRefunded {
			out = append(out, t)
		}
	}
	return out
}

// Transition is the test helper that drives a transaction status.
func (s *PaymentService) Transition(ctx context.Context, caller Caller, id string, to domain.TxStatus, paidWith domain.Method) (*domain.Charge, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ErrTestModeOnly
	}
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	e2e, err := domain.NewEndToEndID("99999999", now, rand.Reader)
	if err != nil {
		return nil, err
	}
	fees, err := s.charges.feesFor(ctx, caller.Account.ID)
	if err != nil {
		return nil, err
	}
	return s.charges.update(ctx, caller.Scope(), id, func(c *domain.Charge) error {
		return c.Transition(to, paidWith, fees, e2e, now)
	})
}

// ReleaseDue moves due pending holds to available.
func (s *PaymentService) ReleaseDue(ctx context.Context) (int, error) {
	now := s.clock.Now()
	holds, err := s.store.ListDueHolds(ctx, now, workerBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, h := range holds {
		eid, err := s.ids.NewID()
		if err != nil {
			return n, err
		}
		e := domain.ReleaseEntry(eid, h.Scope.AccountID, h.Scope.Mode, h.ChargeID, h.Currency, h.Amount, now)
		ok, err := s.store.ReleaseHold(ctx, h, e)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// Wallets returns the caller's wallets, BRL first when present.
func (s *PaymentService) Wallets(ctx context.Context, caller Caller) ([]ports.Wallet, error) {
	ws, err := s.store.Wallets(ctx, caller.Scope())
	if err != nil {
		return nil, err
	}
	sort.SliceStable(ws, func(i, j int) bool {
		return ws[i].Currency == domain.CurrencyBRL && ws[j].Currency != domain.CurrencyBRL
	})
	return ws, nil
}

// ResendWebhook writes fresh events of the payment's current status to
// the outbox; the webhook dispatcher delivers them as new deliveries.
func (s *PaymentService) ResendWebhook(ctx context.Context, caller Caller, id string) (*domain.Charge, error) {
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	var out *domain.Charge
	err := s.cstore.UpdateCharge(ctx, caller.Scope(), id, func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		out = c
		evs, err := domain.StatusEvents(c, s.cfg.Links, s.ids.NewID, s.clock.Now())
		return ports.ChargeChange{Events: evs}, err
	})
	return out, err
}

// ProviderStatusResult is the provider-status answer.
type ProviderStatusResult struct {
	Charge      *domain.Charge
	Provider    string
	ProviderRef string
	Status      ports.ProviderStatus
}

// ProviderStatus reads the payment at its acquirer, bypassing any cache.
func (s *PaymentService) ProviderStatus(ctx context.Context, caller Caller, id string) (ProviderStatusResult, error) {
	c, err := s.charges.Get(ctx, caller, id)
	if err != nil {
		return ProviderStatusResult{}, err
	}
	name, ref := c.Provider()
	if ref == "" {
		return ProviderStatusResult{Charge: c}, ErrNoProviderReference
	}
	ra := s.acquirer.refunds
	if ra == nil {
		return ProviderStatusResult{Charge: c}, ErrNoProviderReference
	}
	st, err := ra.ChargeStatus(ctx, ref)
	if err != nil {
		return ProviderStatusResult{}, err
	}
	return ProviderStatusResult{Charge: c, Provider: name, ProviderRef: ref, Status: st}, nil
}

// Receipt returns the acquirer's PDF receipt of a settled payment.
func (s *PaymentService) Receipt(ctx context.Context, caller Caller, id string) ([]byte, error) {
	c, err := s.charges.Get(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	st := c.Settlement()
	ra := s.acquirer.refunds
	if st == nil || !c.Credited() || ra == nil {
		return nil, ErrReceiptUnavailable
	}
	_, ref := c.Provider()
	return ra.Receipt(ctx, ports.ReceiptRequest{ChargeID: c.ID(), ProviderRef: ref, Amount: c.Amount(), Currency: c.Currency(),
		PaidWith: st.PaidWith, PaidAt: st.PaidAt, EndToEndID: st.EndToEndID, Merchant: caller.Account.MerchantName})
}

// SetAccountFee overrides one method's fees for an account (operators:
// `quitad fees set`).
func (s *PaymentService) SetAccountFee(ctx context.Context, accountID string, m domain.Method, f domain.FeeSchedule) error {
	if !m.Valid() {
		return domain.Invalid(domain.FieldFeeMethod, "unknown payment method")
	}
	for _, fee := range []domain.Fee{f.Provider, f.Platform} {
		if fee.BPS < 0 || fee.BPS > 10_000 || fee.Fixed < 0 {
			return domain.Invalid(domain.FieldFee, "fees are 0–10000 bps plus a non-negative fixed part")
		}
	}
	return s.charges.putAccountFee(ctx, accountID, m, f)
}

// AccountFees is the effective schedule of an account.
func (s *PaymentService) AccountFees(ctx context.Context, accountID string) (map[domain.Method]domain.FeeSchedule, error) {
	return s.charges.feesFor(ctx, accountID)
}

// VerifyLedger recomputes every wallet from the postings and returns the
// problems found (none when the ledger is consistent).
func (s *PaymentService) VerifyLedger(ctx context.Context) ([]string, error) {
	t, err := s.store.LedgerTotals(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger totals: %w", err)
	}
	return domain.VerifyLedger(t.Unbalanced, t.Posted, t.Stored, t.Held), nil
}
