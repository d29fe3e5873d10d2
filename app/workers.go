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
