package store

import (
	"context"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// verifyIncrement is the incremental run in tx, going on from cp:
//
//   - the postings after cp.PostingsThrough (an index range of the
//     primary key) added to the checkpoint's sums give every wallet's
//     postings, compared with every stored balance and the open holds;
//   - the entries of those postings are checked whole: each balances,
//     and their hold takes match;
//   - the charges of those entries and of the events after
//     cp.EventsThrough (every change to what the checks read of a charge
//     or payout writes an event or an entry in its transaction), and the
//     payouts likewise, get their checks again (verifyDerived with a
//     set): counters of their days, refunds, money, splits, payout
//     entries;
//   - payout holds and split advances are checked per wallet, from the
//     sums.
//
// It returns the sums to add to the checkpoint's: the postings read at
// or below through.
func verifyIncrement(ctx context.Context, tx bun.Tx, cp *checkpointRow, through int64) (ports.LedgerCheck, postingSums, error) {
	res := ports.LedgerCheck{Since: cp.VerifiedAt.Time}
	tail, upTo, n, err := sumPostings(ctx, tx, cp.PostingsThrough, through)
	if err != nil {
		return res, nil, err
	}
	res.Postings = n
	posted, err := loadSums(ctx, tx)
	if err != nil {
		return res, nil, err
	}
	posted.add(tail)
	set, err := touched(ctx, tx, cp, &res)
	if err != nil {
		return res, nil, err
	}
	t, err := walletTotals(ctx, tx, posted)
	if err != nil {
		return res, nil, err
	}
	if t.Unbalanced, err = unbalancedEntries(ctx, tx, set.entries); err != nil {
		return res, nil, err
	}
	res.Problems = domain.VerifyLedger(t.Unbalanced, t.Posted, t.Stored, t.Held)
	derived, err := verifyDerived(ctx, tx, set, posted)
	res.Problems = append(res.Problems, derived...)
	return res, upTo, err
}

// touched is what changed since cp: the entries of the postings after
// it, and the charges and payouts of those entries and of the events
// after it. It counts them in res.
func touched(ctx context.Context, tx bun.Tx, cp *checkpointRow, res *ports.LedgerCheck) (*verifySet, error) {
	var entryIDs []string
	if err := tx.NewSelect().Model((*postingRow)(nil)).ColumnExpr("DISTINCT lp.entry_id").
		Where("lp.id > ?", cp.PostingsThrough).Scan(ctx, &entryIDs); err != nil {
		return nil, mapError(err)
	}
	charges, payouts := map[string]bool{}, map[string]bool{}
	err := inChunks(entryIDs, func(chunk []string) error {
		var es []entryRow
		err := tx.NewSelect().Model(&es).Column("charge_id", "payout_id").Where("le.id IN (?)", bun.List(chunk)).Scan(ctx)
		for _, e := range es {
			charges[e.ChargeID] = e.ChargeID != ""
			payouts[e.PayoutID] = e.PayoutID != ""
		}
		return mapError(err)
	})
	if err != nil {
		return nil, err
	}
	var events []struct {
		ChargeID string `bun:"charge_id"`
		N        int64  `bun:"n"`
	}
	if err := tx.NewSelect().Model((*eventRow)(nil)).ColumnExpr("e.charge_id, count(*) AS n").
		Where("e.seq > ?", cp.EventsThrough).GroupExpr("e.charge_id").Scan(ctx, &events); err != nil {
		return nil, mapError(err)
	}
	for _, e := range events {
		res.Events += e.N
		switch {
		case strings.HasPrefix(e.ChargeID, domain.PrefixPayout):
			payouts[strings.TrimPrefix(e.ChargeID, domain.PrefixPayout)] = true
		case !strings.Contains(e.ChargeID, "_"): // a charge's raw id; a subscription's is prefixed
			charges[e.ChargeID] = true
		}
	}
	set := &verifySet{charges: keysOf(charges), payouts: keysOf(payouts), entries: entryIDs}
	if set.entries == nil {
		set.entries = []string{}
	}
	slices.Sort(set.entries)
	res.Entries, res.Charges, res.Payouts = int64(len(set.entries)), int64(len(set.charges)), int64(len(set.payouts))
	return set, nil
}

// keysOf lists the keys m maps to true, sorted; never nil.
func keysOf(m map[string]bool) []string {
	out := []string{}
	for k, ok := range m {
		if ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
