package app

import (
	"context"
	"errors"
	"time"

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

// OrphanCobAge is how old a create's intent must be before the sweep
// treats its cob as orphaned: far longer than any create takes.
const OrphanCobAge = 2 * time.Minute

// SweepOrphanCobs settles the intents of live creates older than
// OrphanCobAge, those in the database and those in the cache
// (ChargesConfig.CobIntents): when a charge holding the intent's txid
// committed the intent is simply dropped; otherwise the cob opened for it
// — if it was — is cancelled at the acquirer, so it cannot be paid with no
// charge behind it. An acquirer that is unreachable keeps the intent for
// the next sweep. A client retrying a key whose cob was cancelled gets the
// acquirer's refusal of the removed txid when it asks for the same txid
// again (a create that checked the database) and must use a new key.
func (s *ChargeService) SweepOrphanCobs(ctx context.Context) (int, error) {
	if s.cfg.Intents == nil {
		return 0, nil
	}
	before := s.clock.Now().Add(-OrphanCobAge)
	intents, err := s.cfg.Intents.ProviderIntentsBefore(ctx, before, workerBatch)
	if err != nil {
		return 0, err
	}
	done, err := s.settleIntents(ctx, intents, func(in ports.ProviderIntent) error {
		return s.cfg.Intents.DeleteProviderIntent(ctx, in.Key)
	})
	if err != nil || s.cfg.CobIntents == nil {
		return done, err
	}
	if intents, err = s.cfg.CobIntents.CobIntentsBefore(ctx, before, workerBatch); err != nil {
		return done, err
	}
	n, err := s.settleIntents(ctx, intents, func(in ports.ProviderIntent) error {
		return s.cfg.CobIntents.DropCobIntent(ctx, in)
	})
	return done + n, err
}

// settleIntents cancels the cob of each intent no committed charge holds,
// then drops the intent.
func (s *ChargeService) settleIntents(ctx context.Context, intents []ports.ProviderIntent, drop func(ports.ProviderIntent) error) (int, error) {
	done := 0
	for _, in := range intents {
		_, err := s.cfg.Intents.FindChargeByTxID(ctx, in.Key.Scope, in.TxID)
		switch {
		case err == nil: // the charge committed
		case errors.Is(err, ports.ErrNotFound):
			err := s.acquirer.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: in.Key.Scope, TxID: in.TxID})
			if errors.Is(err, ports.ErrAcquirerUnavailable) {
				continue
			}
			if err != nil {
				// Most often the cob was never created (the acquirer refused
				// or failed the create): nothing is left to cancel.
				s.log.InfoContext(ctx, "orphan cob sweep: cancel refused", "txid", in.TxID, "err", err)
			} else {
				s.log.WarnContext(ctx, "orphan cob sweep: cancelled a cob whose charge never committed", "txid", in.TxID)
			}
		default:
			return done, err
		}
		if err := drop(in); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}
