package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// ChargesConfig tunes the charge service.
type ChargesConfig struct {
	Links domain.Links
	// Fees per payment method; a method without an entry costs nothing.
	Fees map[domain.Method]domain.FeeSchedule
	// AccountFees, when set, holds per-account overrides of Fees by
	// method, read when a charge settles.
	AccountFees ports.AccountFeeStore
	// WebhookURLs, when set, checks a create's per-transaction webhookUrl
	// (https in live mode, public addresses only) on a first create: after
	// the replay check, so a retry of a completed key answers the original
	// without resolving anything, and before the fraud guard, the cob
	// intent and the acquirer. Nil checks nothing here; the delivery
	// worker and the sender's dialer refuse internal addresses anyway.
	WebhookURLs ports.URLGuard
	// WebhookURLChecks bounds those checks as urlChecks does: outside the
	// request's admission place, 8 at once per account by default.
	WebhookURLChecks URLCheckLimit
	// Holding is how long each method's money stays pending (default
	// domain.DefaultHoldingPeriods).
	Holding domain.HoldingPeriods
	// ExpiryGrace is how long after expires_at an unpaid charge stays
	// pending before it is expired, so that a Pix paid before expires_at
	// whose news is late still settles it (default DefaultExpiryGrace;
	// negative: none). See DefaultExpiryGrace.
	ExpiryGrace time.Duration
	// ReturnAttempts is how many devoluções an automatic return may take
	// when payers' banks refuse them, before it is left for an operator
	// (default DefaultReturnAttempts, at most domain.MaxReturnAttemptIDs).
	ReturnAttempts int
	// ReturnRetryWait is how long after the payer's bank refused a return
	// the next attempt is sent (default DefaultReturnRetryWait).
	ReturnRetryWait time.Duration
	// Batches keeps batches of charge creates (CreateBatch); nil refuses
	// them with ErrBatchesNotSupported.
	Batches ports.ChargeBatchStore
	// Subaccounts, when set, tells which accounts a charge's splits may
	// name (the caller's live sub-accounts); nil refuses every split.
	Subaccounts ports.SubaccountStore
	// BatchErrors renders a refused batch item's error as the charges
	// surface answers it (quitad: the HTTP layer's envelope); nil renders
	// validation errors with the domain's field names and leaves every
	// other error to be retried.
	BatchErrors DescribeError
}

// DefaultExpiryGrace covers what may separate a Pix paid just before
// expires_at from the moment Quita learns of it: the PSP's notification
// (seconds, retried by the PSP), or, when it is lost, the next
// reconciliation pass (every minute) and the time the pass takes, plus
// clock skew between the PSP and Quita.
const DefaultExpiryGrace = 3 * time.Minute

// Caller is an authenticated merchant request: the account and the mode of
// the API key it used.
type Caller struct {
	Account domain.Account
	Mode    domain.Mode
	// KeyFingerprint names the API key used, for audit entries.
	KeyFingerprint string
	// Platform is the account whose key acts for Account, a sub-account
	// of it, through the Quita-Account header; "" when the key's own
	// account is Account.
	Platform string
}

// Scope is the data the caller may touch.
func (c Caller) Scope() ports.Scope {
	return ports.Scope{AccountID: c.Account.ID, Mode: c.Mode}
}

// ChargeService creates, reads and settles charges.
type ChargeService struct {
	store ports.ChargeStore
	// once runs the money writes exactly once per idempotency key:
	// charges, and the refunds and payouts of the services built on this
	// one, in one key space.
	once     *exactlyonce.Runner
	acquirer acquirer
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      ChargesConfig
	guard    *FraudGuard
	// webhookURLs runs cfg.WebhookURLs for creates; nil when it is nil.
	webhookURLs *urlChecks
	// background tracks work that outlives a request (FinalizeMethods).
	background sync.WaitGroup
	// returns counts what automatic returns did (ReturnStats).
	returns returnCounters
	// subscriptionCharge, when set (NewSubscriptionService), is told of
	// every committed change of a subscription's charge, so the cycle it
	// collects follows at once (a charge paid by a notification or a test
	// helper).
	subscriptionCharge func(ctx context.Context, scope ports.Scope, c *domain.Charge)
}

// NewChargeService wires a charge service. Create refuses what guard
// refuses, before any acquirer call; a nil guard refuses nothing.
func NewChargeService(store ports.ChargeStore, once *exactlyonce.Runner,
	acquirer ports.Acquirer, guard *FraudGuard, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg ChargesConfig,
) *ChargeService {
	if cfg.Holding == nil {
		cfg.Holding = domain.DefaultHoldingPeriods
	}
	switch {
	case cfg.ExpiryGrace == 0:
		cfg.ExpiryGrace = DefaultExpiryGrace
	case cfg.ExpiryGrace < 0:
		cfg.ExpiryGrace = 0
	}
	if cfg.ReturnAttempts <= 0 {
		cfg.ReturnAttempts = DefaultReturnAttempts
	}
	cfg.ReturnAttempts = min(cfg.ReturnAttempts, domain.MaxReturnAttemptIDs)
	if cfg.ReturnRetryWait <= 0 {
		cfg.ReturnRetryWait = DefaultReturnRetryWait
	}
	s := &ChargeService{store: store, once: once, acquirer: acquirerOf(acquirer), guard: guard,
		clock: clock, ids: ids, log: log, cfg: cfg}
	if cfg.WebhookURLs != nil {
		s.webhookURLs = newURLChecks(cfg.WebhookURLs, cfg.WebhookURLChecks)
	}
	return s
}

// Get reads a charge of the caller. A charge whose expiry is final
// (expires_at plus the grace, ExpiryDue) is expired, and persisted so,
// before it is returned; in the grace it reads pending, with expires_at in
// the past: no payment can be made any more, but one made in time may
// still be reported.
func (s *ChargeService) Get(ctx context.Context, caller Caller, id string) (*domain.Charge, error) {
	c, err := s.store.GetCharge(ctx, caller.Scope(), id)
	if err != nil {
		return nil, err
	}
	return s.expireIfDue(ctx, caller.Scope(), c)
}

// AmountDue is what a payment of the due-date charge id would have to be
// on day on, today in Brasília when on is nil. It returns Get's errors,
// domain.ErrNotDueDateCharge for an immediate charge, and
// domain.ErrBeforeCreation or domain.ErrOverdueClosed for a day outside
// the charge's payable days.
func (s *ChargeService) AmountDue(ctx context.Context, caller Caller, id string, on *bizdays.Date) (domain.DueBreakdown, error) {
	c, err := s.Get(ctx, caller, id)
	if err != nil {
		return domain.DueBreakdown{}, err
	}
	day := domain.BrasiliaDate(s.clock.Now())
	if on != nil {
		day = *on
	}
	return c.AmountDue(day)
}

// stored reads a charge of scope as stored, without expiring it.
func (s *ChargeService) stored(ctx context.Context, scope ports.Scope, id string) (*domain.Charge, error) {
	return s.store.GetCharge(ctx, scope, id)
}

// GetPublic reads a charge by raw id alone, for the hosted checkout.
func (s *ChargeService) GetPublic(ctx context.Context, id string) (*domain.Charge, error) {
	c, err := s.store.GetChargeByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.expireIfDue(ctx, ports.Scope{AccountID: c.AccountID(), Mode: c.Mode()}, c)
}

// expiryDue reports whether c's expiry is final at now.
func (s *ChargeService) expiryDue(c *domain.Charge, now time.Time) bool {
	return c.ExpiryDue(now, s.cfg.ExpiryGrace)
}

func (s *ChargeService) expireIfDue(ctx context.Context, scope ports.Scope, c *domain.Charge) (*domain.Charge, error) {
	now := s.clock.Now()
	if !s.expiryDue(c, now) {
		return c, nil
	}
	updated, err := s.expire(ctx, scope, c.ID(), now)
	if errors.Is(err, domain.ErrChargeNotExpirable) {
		// Settled or closed by someone else meanwhile: read it again.
		return s.store.GetCharge(ctx, scope, c.ID())
	}
	return updated, err
}

// ListCharges lists the caller's charges, newest first.
func (s *ChargeService) List(ctx context.Context, q ports.ChargeQuery) ([]*domain.Charge, bool, error) {
	cs, more, err := s.store.ListCharges(ctx, q)
	if err != nil {
		return nil, false, err
	}
	now := s.clock.Now()
	for i, c := range cs {
		if s.expiryDue(c, now) {
			if cs[i], err = s.expireIfDue(ctx, q.Scope, c); err != nil {
				return nil, false, err
			}
		}
	}
	return cs, more, nil
}

// expire closes a due charge and writes its events in one transaction.
func (s *ChargeService) expire(ctx context.Context, scope ports.Scope, id string, now time.Time) (*domain.Charge, error) {
	return s.update(ctx, scope, id, func(c *domain.Charge) error { return c.Expire(now) })
}

// update applies change under the row lock and writes, in the same
// transaction, the events of the resulting transition, the ledger entry
// that credits the merchant when the change settled the charge, and the
// automatic return the change owes a payer (sent after the commit).
func (s *ChargeService) update(ctx context.Context, scope ports.Scope, id string, change func(*domain.Charge) error) (*domain.Charge, error) {
	return s.updateOwing(ctx, scope, id, func(c *domain.Charge) ([]returnDue, error) { return nil, change(c) })
}

// updateOwing is update for a change that may owe returns besides the
// one of the charge's settling payment (a wrong amount). A change whose
// credit to the merchant a concurrent one made stale (it paid a debt
// another credit paid first) is computed again from a fresh read.
func (s *ChargeService) updateOwing(ctx context.Context, scope ports.Scope, id string, change func(*domain.Charge) ([]returnDue, error)) (*domain.Charge, error) {
	var (
		out  *domain.Charge
		owed []domain.PixReturn
		err  error
	)
	for range maxBalanceRetries {
		err = s.store.UpdateCharge(ctx, scope, id, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
			prev := c.Status()
			wasCredited, heldBefore := c.Credited(), c.HeldForReview()
			due, err := change(c)
			if err != nil {
				return ports.ChargeChange{}, err
			}
			out = c
			now := s.clock.Now()
			owed = nil
			if due = append(settlementReturn(c), due...); len(due) > 0 {
				if owed, err = s.oweReturns(ctx, c, tx, due, now); err != nil {
					return ports.ChargeChange{}, err
				}
			}
			evs, err := domain.NewChargeEvents(c, prev, domain.TransitionEvents(prev, c.Status()), s.cfg.Links, s.ids.NewID, now)
			if err != nil {
				return ports.ChargeChange{}, err
			}
			ch := ports.ChargeChange{Events: evs, Returns: owed}
			if ch.Entries, err = s.payerFundsEntries(c, heldBefore, owed, now); err != nil {
				return ports.ChargeChange{}, err
			}
			if !wasCredited && c.Credited() {
				es, err := s.paymentEntries(ctx, c, tx, heldBefore, now)
				if err != nil {
					return ports.ChargeChange{}, err
				}
				ch.Entries = append(ch.Entries, es...)
				transfers, err := domain.TransferEvents(c, es, s.ids.NewID, now)
				if err != nil {
					return ports.ChargeChange{}, err
				}
				ch.Events = append(ch.Events, transfers...)
			}
			return ch, nil
		})
		if !errors.Is(err, domain.ErrInsufficientBalance) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if len(owed) > 0 {
		s.sendReturns(ctx, owed)
		// The return may have moved the charge on (a mismatch confirmed).
		if out, err = s.store.GetCharge(ctx, scope, id); err != nil {
			return nil, err
		}
	}
	if _, linked := out.Subscription(); linked && s.subscriptionCharge != nil {
		s.subscriptionCharge(ctx, scope, out)
	}
	return out, nil
}
