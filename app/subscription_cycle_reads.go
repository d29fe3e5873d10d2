package app

import (
	"context"

	"github.com/quitapix/quita/domain"
)

// Cycles reads the cycles of one of the caller's subscriptions, oldest
// first: each cycle's number, due date, amount, charge, cobr status and
// debits (the dashboard's list of a subscription's cycles). ErrNotFound
// for a subscription outside the caller's scope.
func (s *SubscriptionService) Cycles(ctx context.Context, caller Caller, id string) ([]*domain.Cycle, error) {
	if _, err := s.store.GetSubscription(ctx, caller.Scope(), id); err != nil {
		return nil, err
	}
	return s.store.ListCycles(ctx, caller.Scope(), id)
}
