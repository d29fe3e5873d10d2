package app

import (
	"context"
	"errors"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// subscriptionStep computes a change of the locked subscription at now and
// names the events to write with it, each carrying the subscription as
// the change leaves it.
type subscriptionStep func(ctx context.Context, sub *domain.Subscription, tx ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error)

// update applies step to the locked subscription and writes, in the same
// transaction, the events of its status move, the events step names and
// what step's change holds.
func (s *SubscriptionService) update(ctx context.Context, scope ports.Scope, id string, step subscriptionStep) (*domain.Subscription, error) {
	var out *domain.Subscription
	err := s.store.UpdateSubscription(ctx, scope, id, func(ctx context.Context, sub *domain.Subscription, tx ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		prev := sub.Status()
		now := s.clock.Now()
		types, ch, err := step(ctx, sub, tx, now)
		if err != nil {
			return ports.SubscriptionChange{}, err
		}
		types = append(types, domain.SubscriptionStatusEvents(prev, sub.Status())...)
		if len(types) > 0 {
			evs, err := domain.NewSubscriptionEvents(sub, types, s.cfg.Links, s.ids.NewID, now)
			if err != nil {
				return ports.SubscriptionChange{}, err
			}
			ch.Events = append(ch.Events, evs...)
		}
		out = sub
		return ch, nil
	})
	return out, err
}

// expire closes a pending mandate past its deadline.
func (s *SubscriptionService) expire(ctx context.Context, scope ports.Scope, id string) (*domain.Subscription, error) {
	return s.update(ctx, scope, id, func(_ context.Context, sub *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		return nil, ports.SubscriptionChange{}, sub.ExpireAuthorization(now)
	})
}

// authorize records the payer's authorisation; the worker schedules the
// cycles from then on.
func (s *SubscriptionService) authorize(ctx context.Context, scope ports.Scope, id string) (*domain.Subscription, error) {
	out, err := s.update(ctx, scope, id, func(_ context.Context, sub *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		return nil, ports.SubscriptionChange{}, sub.Authorize(now)
	})
	if err == nil {
		s.poke()
	}
	return out, err
}

// reject records the payer's refusal of the mandate.
func (s *SubscriptionService) reject(ctx context.Context, scope ports.Scope, id string) (*domain.Subscription, error) {
	return s.update(ctx, scope, id, func(_ context.Context, sub *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		return nil, ports.SubscriptionChange{}, sub.Reject(now)
	})
}

// cancel ends the subscription (by the merchant or the payer) with its
// open cycles in one transaction; each cancelled cycle keeps its check
// until its charge and its cobr are cancelled too (followCycle), which
// is tried at once and otherwise by the worker. A pending first payment's
// charge is cancelled with it.
func (s *SubscriptionService) cancel(ctx context.Context, scope ports.Scope, id string, by domain.CancelledBy) (*domain.Subscription, error) {
	var cancelled []*domain.Cycle
	out, err := s.update(ctx, scope, id, func(ctx context.Context, sub *domain.Subscription, tx ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		if err := sub.Cancel(by, now); err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		open, err := tx.OpenCycles(ctx)
		if err != nil {
			return nil, ports.SubscriptionChange{}, err
		}
		cancelled = open
		for _, c := range open {
			if err := c.Cancel(now); err != nil {
				return nil, ports.SubscriptionChange{}, err
			}
			c.SetCheckAt(now)
			sub.CycleClosed(c, now)
		}
		return nil, ports.SubscriptionChange{Cycles: open}, nil
	})
	if err != nil {
		return nil, err
	}
	for _, c := range cancelled {
		s.followCycle(ctx, scope, id, c.Number())
	}
	if first := out.FirstChargeID(); first != "" {
		if _, err := s.charges.update(ctx, scope, first, func(c *domain.Charge) error { return c.Cancel(s.clock.Now()) }); err != nil &&
			!errors.Is(err, domain.ErrChargeNotCancellable) {
			s.log.WarnContext(ctx, "cancel a subscription's first payment", "subscription", domain.PrefixSubscription+id, "err", err)
		}
	}
	s.log.InfoContext(ctx, "subscription cancelled", "subscription", domain.PrefixSubscription+id, "by", string(by))
	return s.store.GetSubscription(ctx, scope, id)
}
