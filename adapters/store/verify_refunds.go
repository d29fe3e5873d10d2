package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
)

// verifyRefundEntries checks every refund against its ledger entries: one
// debit (kind refund) putting exactly its amount into refunds payable, then
// one refund_settled when REFUNDED or one refund_failed when FAILED, and
// neither while it is open: every refund, or those of the charges named.
func verifyRefundEntries(ctx context.Context, tx bun.Tx, charges []string) ([]string, error) {
	var problems []string
	err := inChunks(charges, func(chunk []string) error {
		more, err := verifyRefundEntriesOf(ctx, tx, chunk)
		problems = append(problems, more...)
		return err
	})
	return problems, err
}

// verifyRefundEntriesOf is verifyRefundEntries for the refunds of the
// charges named (every refund when nil).
func verifyRefundEntriesOf(ctx context.Context, tx bun.Tx, charges []string) ([]string, error) {
	var refunds []refundRow
	if err := whereIn(tx.NewSelect().Model(&refunds).Column("id", "account_id", "mode", "status", "amount"), "r.charge_id", charges).
		Scan(ctx); err != nil {
		return nil, err
	}
	var kinds []struct {
		RefundID string `bun:"refund_id"`
		Kind     string `bun:"kind"`
		N        int    `bun:"n"`
	}
	if err := whereIn(tx.NewSelect().Model((*entryRow)(nil)), "le.charge_id", charges).Column("refund_id", "kind").ColumnExpr("count(*) AS n").
		Where("refund_id <> ''").GroupExpr("refund_id, kind").Scan(ctx, &kinds); err != nil {
		return nil, err
	}
	entries := map[string]map[string]int{}
	for _, k := range kinds {
		if entries[k.RefundID] == nil {
			entries[k.RefundID] = map[string]int{}
		}
		entries[k.RefundID][k.Kind] = k.N
	}
	var payable []struct {
		RefundID string `bun:"refund_id"`
		Sum      int64  `bun:"total"`
	}
	if err := whereIn(tx.NewSelect().TableExpr("ledger_postings AS lp").Join("JOIN ledger_entries AS le ON le.id = lp.entry_id"), "le.charge_id", charges).
		ColumnExpr("le.refund_id, SUM(lp.amount) AS total").Where("le.kind = ?", string(domain.EntryRefund)).
		Where("lp.ledger_account = ?", string(domain.LedgerRefundsPayable)).GroupExpr("le.refund_id").Scan(ctx, &payable); err != nil {
		return nil, err
	}
	debited := map[string]int64{}
	for _, p := range payable {
		debited[p.RefundID] = p.Sum
	}
	var problems []string
	for _, r := range refunds {
		e := entries[r.ID]
		want := map[string]int{string(domain.EntryRefund): 1}
		switch domain.RefundStatus(r.Status) {
		case domain.RefundRefunded:
			want[string(domain.EntryRefundSettled)] = 1
		case domain.RefundFailed:
			want[string(domain.EntryRefundFailed)] = 1
		}
		for _, kind := range []domain.EntryKind{domain.EntryRefund, domain.EntryRefundSettled, domain.EntryRefundFailed} {
			if got := e[string(kind)]; got != want[string(kind)] {
				problems = append(problems, fmt.Sprintf("account %s (%s): refund %s (%s) has %d %s entries, want %d",
					r.AccountID, r.Mode, r.ID, r.Status, got, kind, want[string(kind)]))
			}
		}
		if e[string(domain.EntryRefund)] == 1 && debited[r.ID] != r.Amount {
			problems = append(problems, fmt.Sprintf("account %s (%s): refund %s of %d put %d into refunds payable",
				r.AccountID, r.Mode, r.ID, r.Amount, debited[r.ID]))
		}
	}
	return problems, nil
}

// verifyRefundFailedSplits checks every FAILED refund with one debit and
// one refund_failed entry: the failure's postings on merchant_available and
// merchant_pending are each the opposite of the debit's, so money a refund
// took from pending never comes back as available (and none is lost):
// every such refund, or those of the charges named.
func verifyRefundFailedSplits(ctx context.Context, tx bun.Tx, charges []string) ([]string, error) {
	var problems []string
	err := inChunks(charges, func(chunk []string) error {
		more, err := verifyRefundFailedSplitsOf(ctx, tx, chunk)
		problems = append(problems, more...)
		return err
	})
	return problems, err
}

// verifyRefundFailedSplitsOf is verifyRefundFailedSplits for the refunds
// of the charges named (every refund when nil).
func verifyRefundFailedSplitsOf(ctx context.Context, tx bun.Tx, charges []string) ([]string, error) {
	var rows []struct {
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		RefundID  string `bun:"refund_id"`
		Kind      string `bun:"kind"`
		Available int64  `bun:"available"`
		Pending   int64  `bun:"pending"`
	}
	err := whereIn(tx.NewSelect().TableExpr("ledger_entries AS le").Join("JOIN refunds AS r ON r.id = le.refund_id").
		Join("LEFT JOIN ledger_postings AS lp ON lp.entry_id = le.id"), "le.charge_id", charges).
		ColumnExpr("le.account_id, le.mode, le.refund_id, le.kind").
		ColumnExpr("COALESCE(SUM(CASE WHEN lp.ledger_account = ? THEN lp.amount END), 0) AS available", string(domain.LedgerAvailable)).
		ColumnExpr("COALESCE(SUM(CASE WHEN lp.ledger_account = ? THEN lp.amount END), 0) AS pending", string(domain.LedgerPending)).
		Where("r.status = ?", string(domain.RefundFailed)).
		Where("le.kind IN (?)", bun.List([]string{string(domain.EntryRefund), string(domain.EntryRefundFailed)})).
		GroupExpr("le.account_id, le.mode, le.refund_id, le.kind, le.id").Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	type split struct {
		n                  int
		available, pending int64
	}
	type key struct{ account, mode, refund string }
	debits, back := map[key]*split{}, map[key]*split{}
	for _, r := range rows {
		k := key{r.AccountID, r.Mode, r.RefundID}
		m := debits
		if r.Kind == string(domain.EntryRefundFailed) {
			m = back
		}
		if m[k] == nil {
			m[k] = &split{}
		}
		m[k].n++
		m[k].available += r.Available
		m[k].pending += r.Pending
	}
	var problems []string
	for k, d := range debits {
		b := back[k]
		if d.n != 1 || b == nil || b.n != 1 {
			continue // verifyRefundEntries reports the entries' count
		}
		if b.available != -d.available || b.pending != -d.pending {
			problems = append(problems, fmt.Sprintf("account %s (%s): FAILED refund %s: its refund_failed entry gives back %d to available and %d to pending, its debit took %d and %d",
				k.account, k.mode, k.refund, b.available, b.pending, -d.available, -d.pending))
		}
	}
	return problems, nil
}

// verifyHoldTakes checks that each entry with hold takes recorded took
// from pending exactly their sum: every entry, or those named. (Debits
// written before the takes were recorded have none.)
func verifyHoldTakes(ctx context.Context, tx bun.Tx, entries []string) ([]string, error) {
	var problems []string
	err := inChunks(entries, func(chunk []string) error {
		more, err := verifyHoldTakesOf(ctx, tx, chunk)
		problems = append(problems, more...)
		return err
	})
	return problems, err
}

// verifyHoldTakesOf is verifyHoldTakes for the entries named (every entry
// when nil).
func verifyHoldTakesOf(ctx context.Context, tx bun.Tx, entries []string) ([]string, error) {
	var takes []struct {
		EntryID   string `bun:"entry_id"`
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		Sum       int64  `bun:"total"`
	}
	if err := whereIn(tx.NewSelect().Model((*holdTakeRow)(nil)), "ht.entry_id", entries).ColumnExpr("entry_id, account_id, mode, SUM(amount) AS total").
		GroupExpr("entry_id, account_id, mode").Scan(ctx, &takes); err != nil {
		return nil, err
	}
	if len(takes) == 0 {
		return nil, nil
	}
	var pending []struct {
		EntryID string `bun:"entry_id"`
		Sum     int64  `bun:"total"`
	}
	q := tx.NewSelect().Model((*postingRow)(nil)).ColumnExpr("entry_id, SUM(amount) AS total").
		Where("ledger_account = ?", string(domain.LedgerPending)).Where("amount < 0").GroupExpr("entry_id")
	if entries == nil {
		q = q.Where("entry_id IN (SELECT entry_id FROM ledger_hold_takes)")
	} else {
		q = whereIn(q, "lp.entry_id", entries)
	}
	if err := q.Scan(ctx, &pending); err != nil {
		return nil, err
	}
	took := make(map[string]int64, len(pending))
	for _, p := range pending {
		took[p.EntryID] = -p.Sum
	}
	var problems []string
	for _, t := range takes {
		if took[t.EntryID] != t.Sum {
			problems = append(problems, fmt.Sprintf("account %s (%s): entry %s took %d from pending, its hold takes sum to %d",
				t.AccountID, t.Mode, t.EntryID, took[t.EntryID], t.Sum))
		}
	}
	return problems, nil
}
