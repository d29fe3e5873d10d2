package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
)

// verifyPayoutEntries checks that every payout (or each named) has the
// entries its status implies: one hold, and one settlement or release
// once final.
func verifyPayoutEntries(ctx context.Context, tx bun.Tx, ids []string) ([]string, error) {
	var problems []string
	err := inChunks(ids, func(chunk []string) error {
		var payouts []payoutRow
		if err := whereIn(tx.NewSelect().Model(&payouts), "po.id", chunk).
			Column("id", "account_id", "mode", "status").Scan(ctx); err != nil {
			return err
		}
		var entries []entryRow
		q := tx.NewSelect().Model(&entries).Column("payout_id", "kind").Where("le.payout_id <> ''")
		if err := whereIn(q, "le.payout_id", chunk).Scan(ctx); err != nil {
			return err
		}
		kinds := map[string][]string{}
		for _, e := range entries {
			kinds[e.PayoutID] = append(kinds[e.PayoutID], e.Kind)
		}
		for _, p := range payouts {
			st := domain.PayoutStatus(p.Status)
			expect := []string{string(domain.EntryPayout)}
			switch {
			case st.Open():
			case st == domain.PayoutPaid:
				expect = append(expect, string(domain.EntryPayoutPaid))
			default:
				expect = append(expect, string(domain.EntryPayoutRelease))
			}
			got := kinds[p.ID]
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(expect))) {
				problems = append(problems, fmt.Sprintf("payout %s%s (%s/%s, %s): ledger entries %v, want %v",
					domain.PrefixPayout, p.ID, p.AccountID, p.Mode, p.Status, got, expect))
			}
		}
		return nil
	})
	return problems, err
}

// verifyPayoutHolds checks, per wallet, that the payout hold in the ledger
// (posted: the sums of the snapshot's postings) equals what the open
// payouts hold, amount and fee: a read of the open payouts only.
func verifyPayoutHolds(ctx context.Context, tx bun.Tx, posted postingSums) ([]string, error) {
	var open []struct {
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		Currency  string `bun:"currency"`
		Total     int64  `bun:"total"`
	}
	err := tx.NewSelect().Model((*payoutRow)(nil)).ColumnExpr("po.account_id, po.mode, po.currency, SUM(po.amount + po.fee) AS total").
		// The statuses PayoutStatus.Open reports.
		Where("po.status IN (?)", bun.List([]string{string(domain.PayoutPending), string(domain.PayoutProcessing)})).
		GroupExpr("po.account_id, po.mode, po.currency").Scan(ctx, &open)
	if err != nil {
		return nil, err
	}
	want := map[domain.WalletKey]int64{}
	for _, o := range open {
		want[domain.WalletKey{AccountID: o.AccountID, Mode: domain.Mode(o.Mode), Currency: domain.Currency(o.Currency)}] = o.Total
	}
	got := posted.of(domain.LedgerPayoutsHeld)
	var problems []string
	for k, v := range want {
		if got[k] != v {
			problems = append(problems, fmt.Sprintf("wallet %s/%s/%s: payout hold in the ledger %d, open payouts hold %d",
				k.AccountID, k.Mode, k.Currency, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			problems = append(problems, fmt.Sprintf("wallet %s/%s/%s: payout hold in the ledger %d, open payouts hold 0",
				k.AccountID, k.Mode, k.Currency, v))
		}
	}
	return problems, nil
}
