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
// splits_payable nets to zero over all its entries; what its refunds and
// disputes took back of each split (split_reversal and split_restored
// entries) is what the charge says the split gave back; and a charge
// never credited has no split entry: every split charge, or those of the
// charges named.
func verifySplits(ctx context.Context, tx bun.Tx, ids []string) ([]string, error) {
	var problems []string
	err := inChunks(ids, func(chunk []string) error {
		more, err := verifySplitsOf(ctx, tx, chunk)
		problems = append(problems, more...)
		return err
	})
	return problems, err
}

// verifySplitsOf is verifySplits for the charges named (every charge when
// nil).
func verifySplitsOf(ctx context.Context, tx bun.Tx, ids []string) ([]string, error) {
	var rows []chargeRow
	if err := whereIn(tx.NewSelect().Model(&rows), "c.id", ids).Where("c.splits IS NOT NULL").Scan(ctx); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	var split any = bun.Safe("SELECT id FROM charges WHERE splits IS NOT NULL")
	if ids != nil {
		named := make([]string, len(rows))
		for i := range rows {
			named[i] = rows[i].ID
		}
		split = bun.List(named)
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
		Where("le.charge_id IN (?)", split).
		GroupExpr("le.charge_id, le.account_id, lp.ledger_account").Scan(ctx, &credits)
	if err != nil {
		return nil, err
	}
	var moves []credit
	err = tx.NewSelect().TableExpr("ledger_postings AS lp").Join("JOIN ledger_entries AS le ON le.id = lp.entry_id").
		ColumnExpr("le.charge_id, le.account_id, lp.ledger_account, SUM(lp.amount) AS total").
		Where("le.kind IN (?) OR lp.ledger_account = ?", bun.List([]string{string(domain.EntrySplitReversal),
			string(domain.EntrySplitRestored)}), string(domain.LedgerSplitsPayable)).
		Where("le.charge_id IN (?)", split).
		GroupExpr("le.charge_id, le.account_id, lp.ledger_account").Scan(ctx, &moves)
	if err != nil {
		return nil, err
	}
	// got[charge][account] is what the charge's credit entries gave the
	// account's wallet, back[charge][account] what its reversals took
	// from it, payable[charge] its splits_payable balance.
	got, back, payable := map[string]map[string]int64{}, map[string]map[string]int64{}, map[string]int64{}
	for _, m := range moves {
		switch domain.LedgerAccount(m.Account) {
		case domain.LedgerSplitsPayable:
			payable[m.ChargeID] += m.Total
		case domain.LedgerAvailable, domain.LedgerPending, domain.LedgerMerchantOwed:
			if back[m.ChargeID] == nil {
				back[m.ChargeID] = map[string]int64{}
			}
			back[m.ChargeID][m.AccountID] -= m.Total
		}
	}
	for _, c := range credits {
		switch domain.LedgerAccount(c.Account) {
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
		reversed := map[string]int64{}
		for _, it := range c.Splits().Items {
			reversed[it.Account] = it.Reversed
		}
		for acct, amount := range back[c.ID()] {
			if _, ok := reversed[acct]; !ok && amount != 0 {
				problems = append(problems, fmt.Sprintf("%s took back %d from account %s, which has no split", name, amount, acct))
			}
		}
		for acct, r := range reversed {
			if b := back[c.ID()][acct]; b != r {
				problems = append(problems, fmt.Sprintf("%s took back %d from account %s, want what its split gave back, %d", name, b, acct, r))
			}
		}
	}
	return problems, nil
}

// verifyAdvances checks that each platform's claim on its sub-accounts
// (its split_advances, per mode and currency, from posted: the sums of
// the snapshot's postings) equals their debt (the sum of their stored
// merchant_owed): every debt of a sub-account is a platform's advance,
// and every repayment pays its platform.
func verifyAdvances(ctx context.Context, tx bun.Tx, posted postingSums) ([]string, error) {
	var debts []struct {
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		Currency  string `bun:"currency"`
		Total     int64  `bun:"total"`
	}
	err := tx.NewSelect().TableExpr("wallet_balances AS wb").Join("JOIN accounts AS a ON a.id = wb.account_id").
		ColumnExpr("a.parent_account_id AS account_id, wb.mode, wb.currency, SUM(wb.owed) AS total").
		Where("a.parent_account_id IS NOT NULL").Where("wb.owed <> 0").
		GroupExpr("a.parent_account_id, wb.mode, wb.currency").Scan(ctx, &debts)
	if err != nil {
		return nil, err
	}
	diff := posted.of(domain.LedgerSplitAdvances)
	for _, d := range debts {
		diff[domain.WalletKey{AccountID: d.AccountID, Mode: domain.Mode(d.Mode), Currency: domain.Currency(d.Currency)}] -= d.Total
	}
	var problems []string
	for k, d := range diff {
		if d != 0 {
			problems = append(problems, fmt.Sprintf("account %s (%s, %s): split_advances differ from its sub-accounts' debt by %d",
				k.AccountID, k.Mode, k.Currency, d))
		}
	}
	return problems, nil
}
