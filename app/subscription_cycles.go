package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// How a cycle and its charge stay together. Money arrives on the charge,
// so for a payment the charge leads and the cycle follows (syncCycle: the
// charge service tells the subscription service of every change of a
// subscription's charge, and the worker checks every open cycle). A
// failure, an expiry or a cancellation is decided on the cycle, which
// then keeps its check (check_at) until its charge has followed
// (followCycle), so a process that stops between the two leaves the rest
// to the worker.

// errNoChange is a step that found nothing to write; its caller succeeds.
var errNoChange = errors.New("nothing to change")

// chargeChanged is ChargeService's hook: a subscription's charge changed
// and committed; its cycle follows.
func (s *SubscriptionService) chargeChanged(ctx context.Context, scope ports.Scope, c *domain.Charge) {
	l, ok := c.Subscription()
	if !ok || l.FirstPayment() {
		return
	}
	if err := s.syncCycle(ctx, scope, l.ID, l.Cycle, c, ""); err != nil {
		s.log.WarnContext(ctx, "a cycle did not follow its charge; the worker will", "subscription", domain.PrefixSubscription+l.ID,
			"cycle", l.Cycle, "err", err)
	}
}

// scheduleCycle creates the cobr of the next cycle (spec) at the acquirer
// and commits the cycle with its charge and the charge_scheduled event.
// Any number of workers may run it at once, and it may run again after any
// failure: the cobr's txid is derived from the subscription and the cycle
// (domain.CycleTxID), so the acquirer creates it once, and the store keeps
// one charge per (subscription, cycle), so a worker that lost the race
// writes nothing and succeeds.
func (s *SubscriptionService) scheduleCycle(ctx context.Context, scope ports.Scope, sub *domain.Subscription, spec domain.CycleSpec) error {
	ra := s.acquirer.recurring
	if ra == nil {
		return ErrRecurringNotSupported
	}
	txid := domain.CycleTxID(scope.AccountID, scope.Mode, sub.ID(), spec.Cycle)
	cobr, err := ra.CreateRecurringCharge(ctx, ports.RecurringChargeRequest{Scope: scope, TxID: txid, RecID: sub.Mandate().RecID,
		DueDate: spec.DueDate, Amount: spec.Amount, Info: sub.Description()})
	if err != nil {
		return fmt.Errorf("create the cobr of cycle %d: %w", spec.Cycle, err)
	}
	now := s.clock.Now()
	chargeID, err := s.ids.NewID()
	if err != nil {
		return err
	}
	ch, err := domain.NewCharge(domain.NewChargeParams{ID: chargeID, AccountID: scope.AccountID, Mode: scope.Mode, Amount: spec.Amount,
		Currency: string(domain.CurrencyBRL), Methods: []domain.Method{domain.MethodPix}, Description: sub.Description(),
		Customer: sub.Customer(), StrictDocument: true,
		Subscription: &domain.ChargeSubscription{ID: sub.ID(), Cycle: spec.Cycle, DueDate: spec.DueDate},
		ExpiresAt:    domain.EndOfBrasiliaDay(spec.LastDebit), Now: now})
	if err != nil {
		return err
	}
	if err := ch.AttachPix(domain.PixDetails{TxID: txid, ExpiresAt: ch.ExpiresAt()}, s.acquirer.nameFor(scope), txid, now); err != nil {
		return err
	}
	cycle, err := domain.NewCycle(domain.NewCycleParams{SubscriptionID: sub.ID(), Cycle: spec.Cycle, AccountID: scope.AccountID,
		Mode: scope.Mode, ChargeID: chargeID, TxID: txid, DueDate: spec.DueDate, Amount: spec.Amount, Policy: sub.RetryPolicy(), Now: now})
	if err != nil {
		return err
	}
	if cobr.Status == domain.CobRActive {
		if err := cycle.Activate(now); err != nil {
			return err
		}
	}
	cycle.SetCheckAt(now.Add(s.cfg.Recheck))
	chEvs, err := domain.NewChargeEvents(ch, "", domain.CreationEvents(), s.cfg.Links, s.ids.NewID, now)
	if err != nil {
		return err
	}
	_, err = s.update(ctx, scope, sub.ID(), func(_ context.Context, locked *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		if err := locked.CycleScheduled(cycle, now); err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		locked.PlanNextRun(now)
		return []domain.EventType{domain.EventSubscriptionChargeScheduled},
			ports.SubscriptionChange{NewCycle: cycle, Charge: ch, ChargeEvents: chEvs}, nil
	})
	switch {
	case err == nil:
		s.log.InfoContext(ctx, "subscription cycle scheduled", "subscription", domain.PrefixSubscription+sub.ID(), "cycle", spec.Cycle,
			"charge", domain.PrefixCharge+chargeID, "due_date", spec.DueDate.String())
		return nil
	case errors.Is(err, domain.ErrCycleMismatch), errors.Is(err, ports.ErrDuplicate):
		return nil // another worker scheduled the cycle, under the same cobr
	case errors.Is(err, domain.ErrSubscriptionNotActive):
		// Cancelled meanwhile: the cobr must not be debited.
		if cerr := ra.CancelRecurringCharge(ctx, ports.CancelRecurringChargeRequest{Scope: scope, TxID: txid}); cerr != nil {
			s.log.WarnContext(ctx, "cancel the cobr of a cancelled subscription", "subscription", domain.PrefixSubscription+sub.ID(),
				"cycle", spec.Cycle, "err", cerr)
		}
	}
	return err
}

// syncCycle makes open cycle k follow its charge ch, read after the
// charge's last change: paid when the charge was credited; when the
// charge closed unpaid, expired (its last debit day passed), cancelled or
// rejected (code, the bank's reason, when known). Nothing changes while
// the charge is open, nor for a cycle already closed.
func (s *SubscriptionService) syncCycle(ctx context.Context, scope ports.Scope, subID string, k int, ch *domain.Charge, code string) error {
	cancelled := false
	_, err := s.update(ctx, scope, subID, func(ctx context.Context, sub *domain.Subscription, tx ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, k)
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		if !c.Status().Open() || c.ChargeID() != ch.ID() {
			return nil, ports.SubscriptionChange{}, errNoChange
		}
		switch st := ch.Status(); {
		case ch.Credited():
			err = c.Paid(ch.Settlement().EndToEndID, now)
		case st.Open(), st == domain.TxProcessing:
			return nil, ports.SubscriptionChange{}, errNoChange
		case st == domain.TxExpired:
			err = c.Expire(now)
		case st == domain.TxCancelled:
			err = c.Cancel(now)
		default:
			err = c.Reject(code, now)
		}
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		c.SetCheckAt(time.Time{}) // the charge already agrees
		if c.Status() == domain.CobRCancelled {
			c.SetCheckAt(now) // its cobr is still to cancel (followCycle)
			cancelled = true
		}
		sub.CycleClosed(c, now)
		var types []domain.EventType
		if t, ok := domain.CycleEvent(c, false); ok {
			types = append(types, t)
		}
		return types, ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}, nil
	})
	switch {
	case errors.Is(err, errNoChange):
		return nil
	case err == nil && cancelled:
		return s.followCycle(ctx, scope, subID, k)
	}
	return err
}

// debitFailed records that the payer's bank rejected cycle k's pending
// debit (code: its reason, "" when none): under the retry policy a retry
// follows (charge_retrying; the retry is asked of the acquirer after the
// commit) or the cycle fails (charge_failed) and its charge follows. With
// a date, only a pending debit of that date fails: news of a debit the
// cycle has already moved past changes nothing. final says the acquirer
// closed the cobr (REJEITADA): the cycle fails whatever its policy left.
func (s *SubscriptionService) debitFailed(ctx context.Context, scope ports.Scope, subID string, k int, date bizdays.Date, code string, final bool) error {
	retry := false
	_, err := s.update(ctx, scope, subID, func(ctx context.Context, sub *domain.Subscription, tx ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, k)
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		if p, ok := c.PendingDebit(); !date.IsZero() && (!ok || p.Date != date) {
			return nil, ports.SubscriptionChange{}, errNoChange
		}
		if final {
			err = c.Reject(code, now)
		} else {
			retry, err = c.DebitFailed(code, now)
		}
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		c.SetCheckAt(now) // the retry to ask for, or the charge to fail
		ch := ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}
		if retry {
			sub.CycleChanged(c, now)
			return []domain.EventType{domain.EventSubscriptionChargeRetrying}, ch, nil
		}
		sub.CycleClosed(c, now)
		return []domain.EventType{domain.EventSubscriptionChargeFailed}, ch, nil
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	if err != nil {
		return err
	}
	if retry {
		return s.requestRetry(ctx, scope, subID, k)
	}
	return s.followCycle(ctx, scope, subID, k)
}

// requestRetry asks the acquirer for the retry cycle k's policy scheduled
// (a pending retry still SOLICITADA) and records that it holds it
// (AGENDADA). A failure leaves the cycle's check due, so the worker asks
// again.
func (s *SubscriptionService) requestRetry(ctx context.Context, scope ports.Scope, subID string, k int) error {
	c, err := s.store.GetCycle(ctx, scope, subID, k)
	if err != nil {
		return err
	}
	a, ok := c.PendingDebit()
	if !ok || a.Kind != domain.AttemptRetry || a.Status != domain.AttemptRequested {
		return nil
	}
	if s.acquirer.recurring == nil {
		return ErrRecurringNotSupported
	}
	if _, err := s.acquirer.recurring.RetryRecurringCharge(ctx, ports.RetryRecurringChargeRequest{Scope: scope, TxID: c.TxID(), Date: a.Date}); err != nil {
		return fmt.Errorf("ask for the retry of cycle %d: %w", k, err)
	}
	_, err = s.update(ctx, scope, subID, func(ctx context.Context, _ *domain.Subscription, tx ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, k)
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		if p, ok := c.PendingDebit(); !ok || p != a {
			return nil, ports.SubscriptionChange{}, errNoChange
		}
		if err := c.Activate(now); err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		c.SetCheckAt(now.Add(s.cfg.Recheck))
		return nil, ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}, nil
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	return err
}

// followCycle makes the charge of closed cycle k agree with it — refused
// for a rejected cycle, expired for an expired one, cancelled (with its
// cobr at the acquirer) for a cancelled one — and then clears the cycle's
// check. Until it succeeds the check stays due and the worker runs it
// again. A charge already closed is left as it is.
func (s *SubscriptionService) followCycle(ctx context.Context, scope ports.Scope, subID string, k int) error {
	c, err := s.store.GetCycle(ctx, scope, subID, k)
	if err != nil {
		return err
	}
	if c.Status().Open() || c.CheckAt().IsZero() {
		return nil
	}
	var change func(*domain.Charge) error
	switch c.Status() {
	case domain.CobRRejected:
		change = func(ch *domain.Charge) error { return ch.FailDebit(s.clock.Now()) }
	case domain.CobRExpired:
		change = func(ch *domain.Charge) error { return ch.Expire(s.clock.Now()) }
	case domain.CobRCancelled:
		change = func(ch *domain.Charge) error { return ch.Cancel(s.clock.Now()) }
		if ra := s.acquirer.recurring; ra != nil {
			if err := ra.CancelRecurringCharge(ctx, ports.CancelRecurringChargeRequest{Scope: scope, TxID: c.TxID()}); err != nil {
				return fmt.Errorf("cancel the cobr of cycle %d: %w", k, err)
			}
		}
	case domain.CobRCreated, domain.CobRActive, domain.CobRConcluded:
	}
	if change != nil {
		_, err := s.charges.update(ctx, scope, c.ChargeID(), change)
		if err != nil && !errors.Is(err, domain.ErrChargeNotPayable) && !errors.Is(err, domain.ErrChargeNotExpirable) &&
			!errors.Is(err, domain.ErrChargeNotCancellable) {
			return fmt.Errorf("close the charge of cycle %d: %w", k, err)
		}
	}
	_, err = s.update(ctx, scope, subID, func(ctx context.Context, _ *domain.Subscription, tx ports.SubscriptionTx, _ time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, k)
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		if c.CheckAt().IsZero() {
			return nil, ports.SubscriptionChange{}, errNoChange
		}
		c.SetCheckAt(time.Time{})
		return nil, ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}, nil
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	return err
}

// checkCycle is the worker's look at cycle k: a closed cycle's charge is
// made to follow it; an open one follows its charge (expired by now, or
// paid or refused elsewhere), asks again for a retry the acquirer did not
// take, and in live mode asks the acquirer how its debit went (a lost
// notification); then it waits Recheck.
func (s *SubscriptionService) checkCycle(ctx context.Context, ref ports.CycleRef) error {
	c, err := s.store.GetCycle(ctx, ref.Scope, ref.SubscriptionID, ref.Cycle)
	if errors.Is(err, ports.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !c.Status().Open() {
		return s.followCycle(ctx, ref.Scope, ref.SubscriptionID, ref.Cycle)
	}
	ch, err := s.charges.stored(ctx, ref.Scope, c.ChargeID())
	if err != nil {
		return err
	}
	if ch, err = s.charges.expireIfDue(ctx, ref.Scope, ch); err != nil {
		return err
	}
	if !ch.Status().Open() {
		return s.syncCycle(ctx, ref.Scope, ref.SubscriptionID, ref.Cycle, ch, "")
	}
	var stepErr error
	if a, ok := c.PendingDebit(); ok && a.Kind == domain.AttemptRetry && a.Status == domain.AttemptRequested {
		stepErr = s.requestRetry(ctx, ref.Scope, ref.SubscriptionID, ref.Cycle)
	}
	if ref.Mode == domain.ModeLive && stepErr == nil {
		stepErr = s.pollCobr(ctx, ref.Scope, c, ch)
	}
	_, err = s.update(ctx, ref.Scope, ref.SubscriptionID, func(ctx context.Context, _ *domain.Subscription, tx ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, ref.Cycle)
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		if !c.Status().Open() {
			return nil, ports.SubscriptionChange{}, errNoChange
		}
		c.SetCheckAt(now.Add(s.cfg.Recheck))
		return nil, ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}, nil
	})
	if errors.Is(err, errNoChange) {
		err = nil
	}
	return errors.Join(stepErr, err)
}
