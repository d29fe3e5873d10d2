package app

import (
	"context"
	"errors"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// How the acquirer's news of a mandate (rec) or a cycle's charge (cobr)
// is applied, whether the worker asked for it (pollMandate, pollCobr) or
// the acquirer reported it unasked (OnRecurrence, OnRecurringCharge, the
// PSP's webhookrec and webhookcobr callbacks). Either way the value is
// the acquirer's current one, and only what moves the subscription
// forward is applied: news that comes twice or late changes nothing.

var _ ports.RecurringNotifications = (*SubscriptionService)(nil)

// OnRecurrence implements ports.RecurringNotifications: the scope's
// subscription whose mandate is rec follows it (applyRecurrence).
// ErrNotFound when no subscription of the scope has that rec.
func (s *SubscriptionService) OnRecurrence(ctx context.Context, scope ports.Scope, rec ports.Recurrence) error {
	id, err := s.store.FindSubscriptionByRecID(ctx, scope, rec.RecID)
	if err != nil {
		return err
	}
	sub, err := s.store.GetSubscription(ctx, scope, id)
	if err != nil {
		return err
	}
	_, err = s.applyRecurrence(ctx, scope, sub, rec)
	return err
}

// OnRecurringCharge implements ports.RecurringNotifications: the open
// cycle whose cobr is charge follows it (applyCobr); a closed cycle has
// nothing left to learn. ErrNotFound when no cycle of the scope has that
// txid.
func (s *SubscriptionService) OnRecurringCharge(ctx context.Context, scope ports.Scope, charge ports.RecurringCharge) error {
	ref, err := s.store.FindCycleByTxID(ctx, scope, charge.TxID)
	if err != nil {
		return err
	}
	c, err := s.store.GetCycle(ctx, scope, ref.SubscriptionID, ref.Cycle)
	if err != nil {
		return err
	}
	if !c.Status().Open() {
		return nil
	}
	ch, err := s.charges.stored(ctx, scope, c.ChargeID())
	if err != nil {
		return err
	}
	return s.applyCobr(ctx, scope, c, ch, &charge)
}

// applyRecurrence applies what the acquirer says of sub's mandate r: the
// payer authorised, rejected, or cancelled (revoked) it, or it expired
// (applied from the subscription's own deadline on; before it the worker
// expires it then). A status sub has already passed changes nothing. It
// returns the subscription as it stands after.
func (s *SubscriptionService) applyRecurrence(ctx context.Context, scope ports.Scope, sub *domain.Subscription, r ports.Recurrence) (*domain.Subscription, error) {
	var (
		out = sub
		err error
	)
	pending := sub.Status() == domain.SubscriptionPendingAuthorization
	switch r.Status {
	case domain.RecApproved:
		if pending {
			out, err = s.authorize(ctx, scope, sub.ID())
		}
	case domain.RecRejected:
		if pending {
			out, err = s.reject(ctx, scope, sub.ID())
		}
	case domain.RecExpired:
		if pending && !s.clock.Now().Before(sub.AuthorizationExpiresAt()) {
			out, err = s.expire(ctx, scope, sub.ID())
		}
	case domain.RecCancelled:
		if !sub.Status().Terminal() {
			by := domain.CancelledByMerchant
			if r.CancelledByPayer {
				by = domain.CancelledByPayer
			}
			out, err = s.cancel(ctx, scope, sub.ID(), by)
		}
	case domain.RecCreated:
	}
	if isStale(err) {
		// Another process applied a change first: read what it left.
		return s.store.GetSubscription(ctx, scope, sub.ID())
	}
	if err != nil {
		return sub, err
	}
	return out, nil
}

// isStale reports an error of a change that lost to another: the
// subscription had already left the status the change starts from.
func isStale(err error) bool {
	return errors.Is(err, domain.ErrSubscriptionNotPending) || errors.Is(err, domain.ErrSubscriptionNotCancellable)
}
