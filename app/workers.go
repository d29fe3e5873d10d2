package app

import (
	"context"
	"errors"

	"github.com/quitapix/quita/domain"
)

// workerBatch bounds the work of one tick so a backlog drains in steps.
const workerBatch = 200

// ExpireDue expires open charges past their expiry and reports how many it
// closed. Safe to run in every process at once: each charge is changed
// under its row lock and one already closed is skipped.
func (s *ChargeService) ExpireDue(ctx context.Context) (int, error) {
	now := s.clock.Now()
	refs, err := s.store.ListOpenExpired(ctx, now, workerBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range refs {
		_, err := s.expire(ctx, r.Scope, r.ID, now)
		switch {
		case err == nil:
			n++
		case errors.Is(err, domain.ErrChargeNotExpirable):
		default:
			return n, err
		}
	}
	return n, nil
}

// RetryReturns performs automatic payer returns that could not be done
// when the payment arrived (acquirer down, process crash).
func (s *ChargeService) RetryReturns(ctx context.Context) (int, error) {
	refs, err := s.store.ListPendingReturns(ctx, workerBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range refs {
		c, err := s.store.GetCharge(ctx, r.Scope, r.ID)
		if err != nil {
			return n, err
		}
		if err := s.returnToPayer(ctx, c); err != nil {
			s.log.WarnContext(ctx, "automatic return failed; will retry", "charge", domain.PrefixCharge+r.ID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}
