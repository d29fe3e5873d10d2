package app

import (
	"context"
	"errors"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// workerBatch bounds the work of one tick so a backlog drains in steps.
// The refund worker is the exception: its lanes keep claiming while they
// find a backlog (AdvanceRefunds), so that a pass never waits for its
// slowest PSP call before taking more.
const workerBatch = 200

// ExpireDue expires open charges whose expiry is final — past expires_at
// by the grace (ChargesConfig.ExpiryGrace), so that a Pix paid in time but
// reported late still settles them — and reports how many it closed. Safe
// to run in every process at once: each charge is changed under its row
// lock and one already closed is skipped.
func (s *ChargeService) ExpireDue(ctx context.Context) (int, error) {
	now := s.clock.Now()
	refs, err := s.store.ListOpenExpired(ctx, now.Add(-s.cfg.ExpiryGrace), workerBatch)
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

// NotifyOverdue sends charge.overdue for the open due-date charges past
// their due date and reports how many it marked. Each charge is marked
// and its event written in one transaction under its row lock, so every
// process may run it at once and a charge gets one notice; a charge paid
// or closed meanwhile is written back without a notice, which clears its
// pending one.
func (s *ChargeService) NotifyOverdue(ctx context.Context) (int, error) {
	now := s.clock.Now()
	refs, err := s.store.ListOverdueNotices(ctx, now, workerBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range refs {
		marked := false
		err := s.store.UpdateCharge(ctx, r.Scope, r.ID, func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
			if err := c.MarkOverdue(now); err != nil {
				// Written back as it is: its notice, if any, is cleared.
				return ports.ChargeChange{}, nil
			}
			marked = true
			evs, err := domain.NewChargeEvents(c, c.Status(), []domain.EventType{domain.EventChargeOverdue}, s.cfg.Links, s.ids.NewID, now)
			return ports.ChargeChange{Events: evs}, err
		})
		switch {
		case errors.Is(err, ports.ErrNotFound):
		case err != nil:
			return n, err
		case marked:
			n++
		}
	}
	return n, nil
}

// OrphanCobAge is how old a create's cob intent must be before the sweep
// treats its cob as orphaned (exactlyonce.OrphanCobAge).
const OrphanCobAge = exactlyonce.OrphanCobAge

// SweepOrphanCobs cancels at the acquirer the cobs of live creates that
// never committed, and settles their intents (exactlyonce.Runner.
// SweepOrphanCobs).
func (s *ChargeService) SweepOrphanCobs(ctx context.Context) (int, error) {
	return s.once.SweepOrphanCobs(ctx, func(ctx context.Context, scope ports.Scope, txid string) error {
		return s.acquirer.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: scope, TxID: txid})
	})
}
