package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

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

// verifyCounterDays is verifyCounters for the charges named (a partial
// verify's): the per-day totals of each day one of them was created on,
// in its account and mode, against a count of that day's charges (an
// index range of charges_scope_created_idx), and the counters of each
// such account and mode against the sum of its per-day totals — a few
// rows per day, not its charges. Both sides count the pending deltas.
func verifyCounterDays(ctx context.Context, tx bun.Tx, charges []string) ([]string, error) {
	type scope struct{ account, mode string }
	type scopeDay struct {
		scope
		day string
	}
	days := map[scopeDay]bool{}
	err := inChunks(charges, func(chunk []string) error {
		var rows []chargeRow
		err := whereIn(tx.NewSelect().Model(&rows).Column("account_id", "mode", "created_at"), "c.id", chunk).Scan(ctx)
		for i := range rows {
			days[scopeDay{scope{rows[i].AccountID, rows[i].Mode}, rows[i].CreatedAt.UTC().Format(time.DateOnly)}] = true
		}
		return mapError(err)
	})
	if err != nil || len(days) == 0 {
		return nil, err
	}
	var deltas []statDeltaRow
	if err := tx.NewSelect().Model(&deltas).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	var problems []string
	scopes := map[scope]bool{}
	order := slices.SortedFunc(maps.Keys(days), func(a, b scopeDay) int {
		return cmp.Or(cmp.Compare(a.account, b.account), cmp.Compare(a.mode, b.mode), cmp.Compare(a.day, b.day))
	})
	for _, d := range order {
		scopes[d.scope] = true
		more, err := verifyOneDay(ctx, tx, d.account, d.mode, d.day, deltas)
		problems = append(problems, more...)
		if err != nil {
			return problems, err
		}
	}
	for s := range scopes {
		more, err := verifyScopeCounts(ctx, tx, s.account, s.mode, deltas)
		problems = append(problems, more...)
		if err != nil {
			return problems, err
		}
	}
	return problems, nil
}

// verifyOneDay compares an account's per-day totals of one UTC day with
// its charges created that day.
func verifyOneDay(ctx context.Context, tx bun.Tx, account, mode, day string, deltas []statDeltaRow) ([]string, error) {
	from, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return nil, err
	}
	var counted []struct {
		Currency string `bun:"currency"`
		Status   string `bun:"status"`
		PaidWith string `bun:"paid_with"`
		N        int64  `bun:"n"`
		Volume   int64  `bun:"volume"`
		Refunded int64  `bun:"refunded"`
	}
	err = tx.NewSelect().Model((*chargeRow)(nil)).
		ColumnExpr("c.currency, c.status, COALESCE(c.settlement_paid_with, '') AS paid_with").
		ColumnExpr("count(*) AS n, SUM(c.amount) AS volume, SUM(c.refund_completed) AS refunded").
		Where("c.account_id = ?", account).Where("c.mode = ?", mode).
		Where("c.created_at >= ?", newDBTime(from)).Where("c.created_at < ?", newDBTime(from.Add(24*time.Hour))).
		GroupExpr("c.currency, c.status, COALESCE(c.settlement_paid_with, '')").Scan(ctx, &counted)
	if err != nil {
		return nil, mapError(err)
	}
	want, got := map[dayTotalKey]verifyGroup{}, map[dayTotalKey]verifyGroup{}
	for _, c := range counted {
		want[dayTotalKey{day: day, currency: c.Currency, status: c.Status, paidWith: c.PaidWith}] = verifyGroup{c.N, c.Volume, c.Refunded}
	}
	var rows []dayTotalRow
	if err := tx.NewSelect().Model(&rows).Where("dt.account_id = ?", account).Where("dt.mode = ?", mode).
		Where("dt.day = ?", day).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	for _, r := range rows {
		k := dayTotalKey{day: day, currency: r.Currency, status: r.Status, paidWith: r.PaidWith}
		g := got[k]
		got[k] = verifyGroup{g.n + r.N, g.volume + r.Volume, g.refunded + r.Refunded}
	}
	for _, d := range deltas {
		if d.AccountID == account && d.Mode == mode && d.Day == day {
			k := dayTotalKey{day: day, currency: d.Currency, status: d.Status, paidWith: d.PaidWith}
			g := got[k]
			got[k] = verifyGroup{g.n + d.N, g.volume + d.Volume, g.refunded + d.Refunded}
		}
	}
	var problems []string
	for _, k := range unionKeys(want, got) {
		if w, g := want[k], got[k]; w != g {
			problems = append(problems, fmt.Sprintf("account %s (%s): charge_day_totals for %s %s %s/%s hold %d charges, %d volume, %d refunded; the charges %d, %d, %d",
				account, mode, k.day, k.currency, k.status, k.paidWith, g.n, g.volume, g.refunded, w.n, w.volume, w.refunded))
		}
	}
	return problems, nil
}

// verifyScopeCounts compares an account's charge_counts in a mode with
// the sum of its per-day totals, per status.
func verifyScopeCounts(ctx context.Context, tx bun.Tx, account, mode string, deltas []statDeltaRow) ([]string, error) {
	sum := func(model any, alias string) (map[string]int64, error) {
		var rows []struct {
			Status string `bun:"status"`
			N      int64  `bun:"n"`
		}
		err := tx.NewSelect().Model(model).ColumnExpr(alias+".status, SUM("+alias+".n) AS n").
			Where(alias+".account_id = ?", account).Where(alias+".mode = ?", mode).GroupExpr(alias+".status").Scan(ctx, &rows)
		out := map[string]int64{}
		for _, r := range rows {
			out[r.Status] = r.N
		}
		for _, d := range deltas {
			if d.AccountID == account && d.Mode == mode {
				out[d.Status] += d.N
			}
		}
		return out, mapError(err)
	}
	counts, err := sum((*countRow)(nil), "cc")
	if err != nil {
		return nil, err
	}
	days, err := sum((*dayTotalRow)(nil), "dt")
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, status := range unionKeys(counts, days) {
		if c, d := counts[status], days[status]; c != d {
			problems = append(problems, fmt.Sprintf("account %s (%s): charge_counts has %d %s charges, the per-day totals %d",
				account, mode, c, status, d))
		}
	}
	return problems, nil
}
