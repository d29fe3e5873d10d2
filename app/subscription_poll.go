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

// pollCobr asks the acquirer how open cycle c's cobr stands and applies
// it (applyCobr). A cobr the acquirer does not know teaches nothing.
func (s *SubscriptionService) pollCobr(ctx context.Context, scope ports.Scope, c *domain.Cycle, ch *domain.Charge) error {
	ra := s.acquirer.recurring
	if ra == nil {
		return nil
	}
	r, err := ra.GetRecurringCharge(ctx, scope, c.TxID())
	if errors.Is(err, ports.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the cobr of cycle %d: %w", c.Number(), err)
	}
	return s.applyCobr(ctx, scope, c, ch, r)
}

// applyCobr applies what the acquirer says of open cycle c's cobr r (ch
// is c's charge): a Pix that paid it settles the charge (the cycle
// follows), a rejected pending debit is a failure under the policy, a
// scheduled one is recorded, and a cobr the PSP rejected or cancelled
// closes the charge. Only the pending debit is looked at, so a debit
// already applied, or one the cycle has moved past, changes nothing.
func (s *SubscriptionService) applyCobr(ctx context.Context, scope ports.Scope, c *domain.Cycle, ch *domain.Charge, r *ports.RecurringCharge) error {
	for _, p := range r.Pix {
		_, err := s.charges.ApplyPixPayment(ctx, scope, ch.ID(), domain.PixPayment{EndToEndID: p.EndToEndID, Amount: p.Amount,
			PayerTaxID: p.PayerTaxID, PayerName: p.PayerName, PaidAt: p.PaidAt, Returned: p.Returned})
		if err != nil && !errors.Is(err, domain.ErrChargeNotPayable) {
			return err
		}
	}
	if len(r.Pix) > 0 {
		return nil
	}
	pending, ok := c.PendingDebit()
	for _, a := range r.Attempts {
		if !ok || a.Date != pending.Date {
			continue
		}
		switch a.Status {
		case domain.AttemptRejected:
			// A cobr the PSP closed as REJEITADA takes no retry (a
			// fatal reason, or none left at the PSP): the cycle fails.
			return s.debitFailed(ctx, scope, c.SubscriptionID(), c.Number(), a.Date, a.RejectCode, r.Status == domain.CobRRejected)
		case domain.AttemptScheduled:
			if pending.Status == domain.AttemptRequested {
				return s.activateCycle(ctx, scope, c.SubscriptionID(), c.Number(), a.Date)
			}
		case domain.AttemptRequested, domain.AttemptPaid, domain.AttemptCancelled, domain.AttemptExpired:
		}
	}
	var change func(*domain.Charge) error
	switch r.Status {
	case domain.CobRRejected:
		change = func(ch *domain.Charge) error { return ch.FailDebit(s.clock.Now()) }
	case domain.CobRCancelled:
		change = func(ch *domain.Charge) error { return ch.Cancel(s.clock.Now()) }
	case domain.CobRCreated, domain.CobRActive, domain.CobRConcluded, domain.CobRExpired:
	}
	if change != nil {
		if _, err := s.charges.update(ctx, scope, ch.ID(), change); err != nil && !errors.Is(err, domain.ErrChargeNotPayable) &&
			!errors.Is(err, domain.ErrChargeNotCancellable) {
			return err
		}
	}
	return nil
}

// activateCycle records that the payer's PSP scheduled cycle k's pending
// debit of date, still asked for; any other change nothing.
func (s *SubscriptionService) activateCycle(ctx context.Context, scope ports.Scope, subID string, k int, date bizdays.Date) error {
	_, err := s.update(ctx, scope, subID, func(ctx context.Context, _ *domain.Subscription, tx ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, k)
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		if p, ok := c.PendingDebit(); !ok || p.Date != date || p.Status != domain.AttemptRequested {
			return nil, ports.SubscriptionChange{}, errNoChange
		}
		if err := c.Activate(now); err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		return nil, ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}, nil
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	return err
}
