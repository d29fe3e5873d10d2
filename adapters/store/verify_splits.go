package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
)

// verifySplits checks every split charge against its entries: when it was
// credited, each sub-account's wallets got exactly its share
// (domain.Charge.SplitShares) from the charge's split entries, the
// platform's wallets exactly the rest (counting what repaid its debt), so
// that the sub-accounts' credits and the platform's make the net; its
// splits_payable nets to zero; and a charge never credited has no split
// entry.
func verifySplits(ctx context.Context, tx bun.Tx) ([]string, error) {
	var rows []chargeRow
	if err := tx.NewSelect().Model(&rows).Where("c.splits IS NOT NULL").Scan(ctx); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	type credit struct {
		ChargeID  string `bun:"charge_id"`
		AccountID string `bun:"account_id"`
		Account   string `bun:"ledger_account"`
		Total     int64  `bun:"total"`
	}
	var credits []credit
	err := tx.NewSelect().TableExpr("ledger_postings AS lp").Join("JOIN ledger_entries AS le ON le.id = lp.entry_id").
		ColumnExpr("le.charge_id, le.account_id, lp.ledger_account, SUM(lp.amount) AS total").
		Where("le.kind IN (?)", bun.List([]string{string(domain.EntryPayment), string(domain.EntryDueFine),
			string(domain.EntryDueInterest), string(domain.EntrySplit)})).
		Where("le.charge_id IN (SELECT id FROM charges WHERE splits IS NOT NULL)").
		GroupExpr("le.charge_id, le.account_id, lp.ledger_account").Scan(ctx, &credits)
	if err != nil {
		return nil, err
	}
	// got[charge][account] is what the charge's entries credited the
	// account's wallet; payable[charge] its splits_payable balance.
	got, payable := map[string]map[string]int64{}, map[string]int64{}
	for _, c := range credits {
		switch domain.LedgerAccount(c.Account) {
		case domain.LedgerSplitsPayable:
			payable[c.ChargeID] += c.Total
		case domain.LedgerAvailable, domain.LedgerPending, domain.LedgerMerchantOwed:
			if got[c.ChargeID] == nil {
				got[c.ChargeID] = map[string]int64{}
			}
			got[c.ChargeID][c.AccountID] += c.Total
		}
	}
	var problems []string
	for i := range rows {
		c, err := rows[i].toDomain()
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("account %s (%s): split charge %s (%s)", c.AccountID(), c.Mode(), c.ID(), c.Status())
		if p := payable[c.ID()]; p != 0 {
			problems = append(problems, fmt.Sprintf("%s leaves %d in splits_payable, want 0", name, p))
		}
		want := map[string]int64{}
		if shares, platform := c.SplitShares(); shares != nil {
			want[c.AccountID()] = platform
			for j, it := range c.Splits().Items {
				want[it.Account] += shares[j]
			}
		}
		var sum int64
		for acct, amount := range got[c.ID()] {
			sum += amount
			if _, ok := want[acct]; !ok && amount != 0 {
				problems = append(problems, fmt.Sprintf("%s credited %d to account %s, which has no share", name, amount, acct))
			}
		}
		for acct, amount := range want {
			if g := got[c.ID()][acct]; g != amount {
				problems = append(problems, fmt.Sprintf("%s credited %d to account %s, want its share %d", name, g, acct, amount))
			}
		}
		if len(want) > 0 && sum != c.Net() {
			problems = append(problems, fmt.Sprintf("%s credited %d in all, want the net %d", name, sum, c.Net()))
		}
	}
	return problems, nil
}
