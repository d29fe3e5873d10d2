package app

import (
	"context"
	"errors"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// maxCyclesPerStep bounds the cycles one step of a subscription schedules
// or skips (several cycles of a weekly subscription may be in their
// windows at once).
const maxCyclesPerStep = 16

// RunSubscriptions is the subscription worker's tick. It claims the
// subscriptions whose next run is due — a mandate's deadline, a cycle's
// window opening, a variable cycle's window closing; in live mode a
// recheck of the mandate at the acquirer — and steps each, then claims the
// cycles whose check is due and checks each (checkCycle). Claims are
// leases (SubscriptionsConfig.Lease), taken with FOR UPDATE SKIP LOCKED on
// Postgres, so every process may run it; two that step one subscription
// at once still create one charge per cycle (scheduleCycle). It reports
// how many items it handled and the first failure (each item's failure
// leaves it to come back when its lease ends).
func (s *SubscriptionService) RunSubscriptions(ctx context.Context) (int, error) {
	now := s.clock.Now()
	subs, err := s.store.ClaimDueSubscriptions(ctx, now, now.Add(s.cfg.Lease), workerBatch)
	if err != nil {
		return 0, err
	}
	var first error
	note := func(what string, id string, err error) {
		if err == nil {
			return
		}
		s.log.WarnContext(ctx, "subscription worker: "+what, "subscription", domain.PrefixSubscription+id, "err", err)
		if first == nil {
			first = err
		}
	}
	for _, r := range subs {
		note("step", r.ID, s.stepSubscription(ctx, r))
	}
	cycles, err := s.store.ClaimDueCycles(ctx, now, now.Add(s.cfg.Lease), workerBatch)
	if err != nil {
		return len(subs), errors.Join(first, err)
	}
	for _, r := range cycles {
		note("check a cycle", r.SubscriptionID, s.checkCycle(ctx, r))
	}
	return len(subs) + len(cycles), first
}

// stepSubscription does what the clock made due for one subscription: a
// pending mandate past its deadline expires; an active one gets the
// charges of the cycles whose window is open, skips a cycle whose window
// closed without one, and completes when its schedule ended; in live mode
// the acquirer is asked whether the payer answered or revoked the
// mandate. Then the next run is planned.
func (s *SubscriptionService) stepSubscription(ctx context.Context, ref ports.SubscriptionRef) error {
	sub, err := s.store.GetSubscription(ctx, ref.Scope, ref.ID)
	if errors.Is(err, ports.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var stepErr error
	switch sub.Status() {
	case domain.SubscriptionPendingAuthorization:
		if !s.clock.Now().Before(sub.AuthorizationExpiresAt()) {
			if _, err := s.expire(ctx, ref.Scope, ref.ID); err != nil && !errors.Is(err, domain.ErrSubscriptionNotPending) {
				return err
			}
			return nil
		}
		if ref.Mode == domain.ModeLive {
			if sub, stepErr = s.pollMandate(ctx, ref.Scope, sub); stepErr == nil && sub.Status() == domain.SubscriptionActive {
				stepErr = s.scheduleDue(ctx, ref.Scope, sub)
			}
		}
	case domain.SubscriptionActive:
		if ref.Mode == domain.ModeLive {
			sub, stepErr = s.pollMandate(ctx, ref.Scope, sub)
		}
		if stepErr == nil && sub.Status() == domain.SubscriptionActive {
			stepErr = s.scheduleDue(ctx, ref.Scope, sub)
		}
	case domain.SubscriptionRejected, domain.SubscriptionExpired, domain.SubscriptionCancelled, domain.SubscriptionCompleted:
		return nil
	}
	return errors.Join(stepErr, s.plan(ctx, ref.Scope, ref.ID, stepErr != nil))
}

// scheduleDue creates the charges of sub's cycles whose window is open on
// today, skips those whose window closed, and completes sub when its
// schedule ended with every cycle closed.
func (s *SubscriptionService) scheduleDue(ctx context.Context, scope ports.Scope, sub *domain.Subscription) error {
	for range maxCyclesPerStep {
		now := s.clock.Now()
		today := domain.BrasiliaDate(now)
		spec, err := sub.NextCycleSpec(today, false)
		switch {
		case errors.Is(err, domain.ErrCycleWindowClosed):
			s.log.WarnContext(ctx, "a cycle's window closed without its charge: skipped", "subscription", domain.PrefixSubscription+sub.ID(),
				"cycle", sub.NextCycle(), "variable", sub.Variable())
			_, err = s.update(ctx, scope, sub.ID(), func(_ context.Context, locked *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
				return nil, ports.SubscriptionChange{}, locked.SkipCycle(domain.BrasiliaDate(now), now)
			})
		case errors.Is(err, domain.ErrNoMoreCycles):
			_, err = s.update(ctx, scope, sub.ID(), func(_ context.Context, locked *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
				if !locked.CompleteIfDone(now) {
					return nil, ports.SubscriptionChange{}, errNoChange
				}
				return nil, ports.SubscriptionChange{}, nil
			})
			if errors.Is(err, errNoChange) {
				err = nil
			}
			return err
		case err != nil:
			return nil // not in its window yet, or its amount not set
		default:
			err = s.scheduleCycle(ctx, scope, sub, spec)
		}
		if err != nil {
			return err
		}
		if sub, err = s.store.GetSubscription(ctx, scope, sub.ID()); err != nil {
			return err
		}
	}
	return nil
}

// plan sets when the worker next steps the subscription
// (domain.Subscription.PlanNextRun); a step that failed comes back within
// a minute, and in live mode a pending or active mandate within Recheck,
// to ask the acquirer again.
func (s *SubscriptionService) plan(ctx context.Context, scope ports.Scope, id string, failed bool) error {
	_, err := s.update(ctx, scope, id, func(_ context.Context, sub *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		sub.PlanNextRun(now)
		next := sub.NextRunAt()
		switch {
		case sub.Status().Terminal():
		case failed:
			if retry := now.Add(min(s.cfg.Recheck, time.Minute)); next.Before(retry) {
				next = retry
			}
		case scope.Mode == domain.ModeLive:
			if recheck := now.Add(s.cfg.Recheck); next.IsZero() || recheck.Before(next) {
				next = recheck
			}
		}
		sub.SetNextRunAt(next)
		return nil, ports.SubscriptionChange{}, nil
	})
	return err
}

// pollMandate asks the acquirer how the mandate of sub stands and applies
// it (applyRecurrence). A mandate the acquirer does not know teaches
// nothing. It returns the subscription as it stands after.
func (s *SubscriptionService) pollMandate(ctx context.Context, scope ports.Scope, sub *domain.Subscription) (*domain.Subscription, error) {
	ra := s.acquirer.recurring
	if ra == nil || sub.Mandate().RecID == "" {
		return sub, nil
	}
	r, err := ra.GetRecurrence(ctx, scope, sub.Mandate().RecID)
	if errors.Is(err, ports.ErrNotFound) {
		return sub, nil
	}
	if err != nil {
		return sub, err
	}
	return s.applyRecurrence(ctx, scope, sub, *r)
}
