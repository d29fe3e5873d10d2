package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
)

// snapshot runs fn in one read-only transaction that sees one consistent
// state without taking a lock writers wait on: REPEATABLE READ on Postgres
// (an MVCC snapshot: writers go on, and nothing they commit meanwhile can
// look like drift). On SQLite it is a read transaction of the verifying
// process (`quitad ledger verify` opens its own connection). `ledger
// verify` reads through it, so it can run against a live database.
func (db *DB) snapshot(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	var opts *sql.TxOptions
	if db.dialect == DialectPostgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return mapError(db.bun.RunInTx(ctx, opts, fn))
}

// VerifyDerived implements ports.PaymentStore: it recomputes from the
// charges and refunds what the write path maintains incrementally — the
// per-status charge counters, the per-day totals, each refund's ledger
// entries (a failed one giving back to available and pending what its
// debit took from each), the hold takes, each split charge's credits,
// each payout's entries (with the payout hold per wallet) and each
// transfer's two entries — in one snapshot, and reports each difference
// naming its account and mode, sorted.
func (db *DB) VerifyDerived(ctx context.Context) ([]string, error) {
	var problems []string
	err := db.snapshot(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if problems, err = verifyCounters(ctx, tx); err != nil {
			return err
		}
		more, err := verifyRefundEntries(ctx, tx)
		problems = append(problems, more...)
		if err != nil {
			return err
		}
		more, err = verifyRefundFailedSplits(ctx, tx)
		problems = append(problems, more...)
		if err != nil {
			return err
		}
		more, err = verifyHoldTakes(ctx, tx)
		problems = append(problems, more...)
		if err != nil {
			return err
		}
		more, err = verifyChargeMoney(ctx, tx)
		problems = append(problems, more...)
		if err != nil {
			return err
		}
		more, err = verifySplits(ctx, tx)
		problems = append(problems, more...)
		if err != nil {
			return err
		}
		more, err = verifyPayoutHolds(ctx, tx)
		problems = append(problems, more...)
		if err != nil {
			return err
		}
		more, err = verifyTransfers(ctx, tx)
		problems = append(problems, more...)
		return err
	})
	slices.Sort(problems)
	return problems, err
}

type verifyGroup struct{ n, volume, refunded int64 }

// verifyCounters compares charge_counts and charge_day_totals, each with the
// deltas not yet folded into it, with the charges themselves.
func verifyCounters(ctx context.Context, tx bun.Tx) ([]string, error) {
	var charges []chargeRow
	if err := tx.NewSelect().Model(&charges).
		Column("id", "account_id", "mode", "status", "currency", "amount", "refund_completed", "settlement_paid_with", "created_at").
		Scan(ctx); err != nil {
		return nil, err
	}
	type countKey struct{ account, mode, status string }
	type dayKey struct {
		account, mode string
		dayTotalKey
	}
	wantCounts, wantDays := map[countKey]int64{}, map[dayKey]verifyGroup{}
	for i := range charges {
		c := &charges[i]
		wantCounts[countKey{c.AccountID, c.Mode, c.Status}]++
		k := dayKey{c.AccountID, c.Mode, dayTotalKeyOf(c, c.CreatedAt)}
		g := wantDays[k]
		g.n, g.volume, g.refunded = g.n+1, g.volume+c.Amount, g.refunded+c.RefundCompleted
		wantDays[k] = g
	}
	var counts []countRow
	if err := tx.NewSelect().Model(&counts).Scan(ctx); err != nil {
		return nil, err
	}
	gotCounts := map[countKey]int64{}
	for _, r := range counts {
		gotCounts[countKey{r.AccountID, r.Mode, r.Status}] += r.N
	}
	var deltas []statDeltaRow
	if err := tx.NewSelect().Model(&deltas).Scan(ctx); err != nil {
		return nil, err
	}
	for _, d := range deltas {
		gotCounts[countKey{d.AccountID, d.Mode, d.Status}] += d.N
	}
	var problems []string
	for _, k := range unionKeys(wantCounts, gotCounts) {
		if w, g := wantCounts[k], gotCounts[k]; w != g {
			problems = append(problems, fmt.Sprintf("account %s (%s): charge_counts has %d %s charges, the charges table %d",
				k.account, k.mode, g, k.status, w))
		}
	}
	var days []dayTotalRow
	if err := tx.NewSelect().Model(&days).Scan(ctx); err != nil {
		return nil, err
	}
	gotDays := map[dayKey]verifyGroup{}
	for _, r := range days {
		k := dayKey{r.AccountID, r.Mode, dayTotalKey{day: r.Day, currency: r.Currency, status: r.Status, paidWith: r.PaidWith}}
		g := gotDays[k]
		g.n, g.volume, g.refunded = g.n+r.N, g.volume+r.Volume, g.refunded+r.Refunded
		gotDays[k] = g
	}
	for _, d := range deltas {
		k := dayKey{d.AccountID, d.Mode, dayTotalKey{day: d.Day, currency: d.Currency, status: d.Status, paidWith: d.PaidWith}}
		g := gotDays[k]
		g.n, g.volume, g.refunded = g.n+d.N, g.volume+d.Volume, g.refunded+d.Refunded
		gotDays[k] = g
	}
	for _, k := range unionKeys(wantDays, gotDays) {
		if w, g := wantDays[k], gotDays[k]; w != g {
			problems = append(problems, fmt.Sprintf("account %s (%s): charge_day_totals for %s %s %s/%s hold %d charges, %d volume, %d refunded; the charges %d, %d, %d",
				k.account, k.mode, k.day, k.currency, k.status, k.paidWith, g.n, g.volume, g.refunded, w.n, w.volume, w.refunded))
		}
	}
	return problems, nil
}

// verifyRefundEntries checks every refund against its ledger entries: one
// debit (kind refund) putting exactly its amount into refunds payable, then
// one refund_settled when REFUNDED or one refund_failed when FAILED, and
// neither while it is open.
func verifyRefundEntries(ctx context.Context, tx bun.Tx) ([]string, error) {
	var refunds []refundRow
	if err := tx.NewSelect().Model(&refunds).Column("id", "account_id", "mode", "status", "amount").Scan(ctx); err != nil {
		return nil, err
	}
	var kinds []struct {
		RefundID string `bun:"refund_id"`
		Kind     string `bun:"kind"`
		N        int    `bun:"n"`
	}
	if err := tx.NewSelect().Model((*entryRow)(nil)).Column("refund_id", "kind").ColumnExpr("count(*) AS n").
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
	if err := tx.NewSelect().TableExpr("ledger_postings AS lp").Join("JOIN ledger_entries AS le ON le.id = lp.entry_id").
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
// took from pending never comes back as available (and none is lost).
func verifyRefundFailedSplits(ctx context.Context, tx bun.Tx) ([]string, error) {
	var rows []struct {
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		RefundID  string `bun:"refund_id"`
		Kind      string `bun:"kind"`
		Available int64  `bun:"available"`
		Pending   int64  `bun:"pending"`
	}
	err := tx.NewSelect().TableExpr("ledger_entries AS le").Join("JOIN refunds AS r ON r.id = le.refund_id").
		Join("LEFT JOIN ledger_postings AS lp ON lp.entry_id = le.id").
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
// from pending exactly their sum. (Debits written before the takes were
// recorded have none.)
func verifyHoldTakes(ctx context.Context, tx bun.Tx) ([]string, error) {
	var takes []struct {
		EntryID   string `bun:"entry_id"`
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		Sum       int64  `bun:"total"`
	}
	if err := tx.NewSelect().Model((*holdTakeRow)(nil)).ColumnExpr("entry_id, account_id, mode, SUM(amount) AS total").
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
	if err := tx.NewSelect().Model((*postingRow)(nil)).ColumnExpr("entry_id, SUM(amount) AS total").
		Where("ledger_account = ?", string(domain.LedgerPending)).Where("amount < 0").
		Where("entry_id IN (SELECT entry_id FROM ledger_hold_takes)").
		GroupExpr("entry_id").Scan(ctx, &pending); err != nil {
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

// unionKeys lists the keys of both maps, each once.
func unionKeys[K comparable, V any](a, b map[K]V) []K {
	seen := make(map[K]bool, len(a)+len(b))
	var out []K
	for _, m := range []map[K]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// verifyPayoutHolds checks, per wallet, that the payout hold in the ledger
// equals what the open payouts hold (amount and fee), and that every
// payout has the entries its status implies: one hold, and one settlement
// or release once final.
func verifyPayoutHolds(ctx context.Context, tx bun.Tx) ([]string, error) {
	var payouts []payoutRow
	if err := tx.NewSelect().Model(&payouts).Column("id", "account_id", "mode", "currency", "status", "amount", "fee").
		Scan(ctx); err != nil {
		return nil, err
	}
	var entries []entryRow
	if err := tx.NewSelect().Model(&entries).Column("payout_id", "kind").Where("le.payout_id <> ''").Scan(ctx); err != nil {
		return nil, err
	}
	kinds := map[string][]string{}
	for _, e := range entries {
		kinds[e.PayoutID] = append(kinds[e.PayoutID], e.Kind)
	}
	want := map[domain.WalletKey]int64{}
	var problems []string
	for _, p := range payouts {
		k := domain.WalletKey{AccountID: p.AccountID, Mode: domain.Mode(p.Mode), Currency: domain.Currency(p.Currency)}
		st := domain.PayoutStatus(p.Status)
		expect := []string{string(domain.EntryPayout)}
		switch {
		case st.Open():
			want[k] += p.Amount + p.Fee
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
	var held []struct {
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		Currency  string `bun:"currency"`
		Sum       int64  `bun:"total"`
	}
	err := tx.NewSelect().Model((*postingRow)(nil)).ColumnExpr("account_id, mode, currency, SUM(amount) AS total").
		Where("ledger_account = ?", string(domain.LedgerPayoutsHeld)).GroupExpr("account_id, mode, currency").Scan(ctx, &held)
	if err != nil {
		return nil, err
	}
	got := map[domain.WalletKey]int64{}
	for _, h := range held {
		got[domain.WalletKey{AccountID: h.AccountID, Mode: domain.Mode(h.Mode), Currency: domain.Currency(h.Currency)}] = h.Sum
	}
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
