package store

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// eventsMargin is how long before a checkpoint an event it did not cover
// may have been made (its created_at): the transactions open when the
// checkpoint was taken, and clocks apart.
const eventsMargin = time.Hour

// CheckLedger implements ports.PaymentStore. A full run sums every
// posting and checks every charge, refund and payout (verifyDerived); an
// incremental one (verifyIncrement) sums the postings written since the
// checkpoint onto its sums and checks again only the entries, charges
// and payouts written or changed since. Both compare every wallet with
// its postings and open holds. Then, when the run was full or found
// nothing, the checkpoint moves to the settled horizon.
func (db *DB) CheckLedger(ctx context.Context, opts ports.LedgerCheckOptions) (ports.LedgerCheck, error) {
	began := time.Now()
	var h ledgerHorizon
	if db.dialect == DialectPostgres {
		var err error
		if h, err = db.settledHorizon(ctx); err != nil {
			return ports.LedgerCheck{}, err
		}
	}
	var (
		res  ports.LedgerCheck
		cp   *checkpointRow
		next checkpointRow
		sums postingSums
	)
	full := opts.Full
	err := db.snapshot(ctx, func(ctx context.Context, tx bun.Tx) error {
		var rewrites int64
		var err error
		if cp, rewrites, err = loadCheckpoint(ctx, tx); err != nil {
			return err
		}
		if db.dialect != DialectPostgres {
			if h, err = sqliteHorizon(ctx, tx); err != nil {
				return err
			}
		}
		var reason string
		if !full {
			reason = unusable(cp, rewrites, opts.EventsKept, began)
			full = reason != ""
		}
		next = checkpointRow{PostingsThrough: h.postings, EventsThrough: h.events, Rewrites: rewrites,
			VerifiedAt: newDBTime(began), FullAt: newDBTime(began)}
		if full {
			res, sums, err = verifyAll(ctx, tx, h)
			res.Reason = reason
			return err
		}
		next.PostingsThrough, next.EventsThrough = max(h.postings, cp.PostingsThrough), max(h.events, cp.EventsThrough)
		next.FullAt = cp.FullAt
		res, sums, err = verifyIncrement(ctx, tx, cp, next.PostingsThrough)
		return err
	})
	res.Full = full
	if err != nil {
		return res, err
	}
	slices.Sort(res.Problems)
	if h.settled && (full || len(res.Problems) == 0) {
		res.Saved, err = db.saveCheckpoint(ctx, cp, next, sums, full)
	}
	return res, err
}

// unusable says why an incremental run cannot go on from cp: there is
// none; ledger rows were updated or deleted since (ledger_rewrites
// moved); or it is older than the events kept, which are how a run finds
// the charges changed since. "" when it can.
func unusable(cp *checkpointRow, rewrites int64, kept time.Duration, now time.Time) string {
	switch {
	case cp == nil:
		return "no checkpoint yet"
	case cp.Rewrites != rewrites:
		return "ledger rows were updated or deleted since the checkpoint"
	case kept > 0 && cp.VerifiedAt.Before(now.Add(-kept+eventsMargin)):
		return "the checkpoint is older than the events kept"
	}
	return ""
}

// verifyAll is the full run in tx: every posting summed (the sums at or
// below h.postings are the new checkpoint's), every wallet, every entry's
// balance and every derived check.
func verifyAll(ctx context.Context, tx bun.Tx, h ledgerHorizon) (ports.LedgerCheck, postingSums, error) {
	var res ports.LedgerCheck
	posted, upTo, n, err := sumPostings(ctx, tx, 0, h.postings)
	if err != nil {
		return res, nil, err
	}
	res.Postings = n
	t, err := walletTotals(ctx, tx, posted)
	if err != nil {
		return res, nil, err
	}
	if t.Unbalanced, err = unbalancedEntries(ctx, tx, nil); err != nil {
		return res, nil, err
	}
	res.Problems = domain.VerifyLedger(t.Unbalanced, t.Posted, t.Stored, t.Held)
	derived, err := verifyDerived(ctx, tx, nil, posted)
	res.Problems = append(res.Problems, derived...)
	return res, upTo, err
}
