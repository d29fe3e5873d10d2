package exactlyonce

import (
	"context"
	"errors"
	"time"

	"github.com/quitapix/quita/ports"
)

// OrphanCobAge is how old a write's cob intent must be before the sweep
// treats its cob as orphaned: far longer than any create takes.
const OrphanCobAge = 2 * time.Minute

// sweepBatch bounds the intents one sweep settles in each store.
const sweepBatch = 200

// CancelCob cancels the cob opened under txid for scope at the acquirer.
// ports.ErrAcquirerUnavailable keeps the intent for the next sweep; any
// other error means there is nothing left to cancel (most often the cob
// was never created: the acquirer refused or failed the create).
type CancelCob func(ctx context.Context, scope ports.Scope, txid string) error

// SweepOrphanCobs settles the intents older than OrphanCobAge, those in
// the database and, under CacheFirst, those in the cache: when a charge
// holding the intent's txid committed, the intent is simply dropped;
// otherwise the cob opened for it — if it was — is cancelled, so it cannot
// be paid with no charge behind it. A client retrying a key whose cob was
// cancelled gets the acquirer's refusal of the removed txid when it asks
// for the same txid again (a checked write) and must use a new key. It
// returns how many intents it settled.
func (r *Runner) SweepOrphanCobs(ctx context.Context, cancel CancelCob) (int, error) {
	before := r.clock.Now().Add(-OrphanCobAge)
	intents, err := r.store.ProviderIntentsBefore(ctx, before, sweepBatch)
	if err != nil {
		return 0, err
	}
	done, err := r.settleIntents(ctx, intents, cancel, func(in ports.ProviderIntent) error {
		return r.store.DeleteProviderIntent(ctx, in.Key)
	})
	if err != nil || r.cobs == nil {
		return done, err
	}
	if intents, err = r.cobs.CobIntentsBefore(ctx, before, sweepBatch); err != nil {
		return done, err
	}
	n, err := r.settleIntents(ctx, intents, cancel, func(in ports.ProviderIntent) error {
		return r.cobs.DropCobIntent(ctx, in)
	})
	return done + n, err
}

// settleIntents cancels the cob of each intent no committed charge holds,
// then drops the intent.
func (r *Runner) settleIntents(ctx context.Context, intents []ports.ProviderIntent, cancel CancelCob, drop func(ports.ProviderIntent) error) (int, error) {
	done := 0
	for _, in := range intents {
		_, err := r.store.FindChargeByTxID(ctx, in.Key.Scope, in.TxID)
		switch {
		case err == nil: // the charge committed
		case errors.Is(err, ports.ErrNotFound):
			err := cancel(ctx, in.Key.Scope, in.TxID)
			if errors.Is(err, ports.ErrAcquirerUnavailable) {
				continue
			}
			if err != nil {
				r.log.InfoContext(ctx, "orphan cob sweep: cancel refused", "txid", in.TxID, "err", err)
			} else {
				r.log.WarnContext(ctx, "orphan cob sweep: cancelled a cob whose charge never committed", "txid", in.TxID)
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
