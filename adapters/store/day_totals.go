package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// dayTotalRow is one group of charge_day_totals: the charges of an account
// created on one UTC day, by currency, status and settlement method, in one
// of several shards (rows written before the counters were folded from
// deltas, stat_deltas.go, were spread by charge id; folds write shard 0).
// Each charge counts in exactly one group at any time with its amount and
// confirmed refunds, so summing the shards and the pending deltas gives
// what a scan of the charges would.
type dayTotalRow struct {
	bun.BaseModel `bun:"table:charge_day_totals,alias:dt"`

	AccountID string `bun:"account_id,pk"`
	Mode      string `bun:"mode,pk"`
	Day       string `bun:"day,pk"`
	Currency  string `bun:"currency,pk"`
	Status    string `bun:"status,pk"`
	PaidWith  string `bun:"paid_with,pk"`
	Shard     int    `bun:"shard,pk"`
	N         int64  `bun:"n"`
	Volume    int64  `bun:"volume"`
	Refunded  int64  `bun:"refunded"`
}

// dayTotalKey is the group a charge row counts in.
type dayTotalKey struct{ day, currency, status, paidWith string }

func dayTotalKeyOf(r *chargeRow, created dbTime) dayTotalKey {
	return dayTotalKey{day: created.UTC().Format(time.DateOnly), currency: r.Currency, status: r.Status, paidWith: deref(r.SettlementPaidWith)}
}

// dayAligned reports whether since is a UTC midnight, where the per-day
// totals answer exactly what a scan from since would.
func dayAligned(since time.Time) bool {
	u := since.UTC()
	return u.Equal(u.Truncate(24 * time.Hour))
}

// aggregateDayTotals is AggregatePayments from the per-day totals and the
// deltas not yet folded into them (one statement, one snapshot): a few rows
// per day instead of every charge of the window.
func (db *DB) aggregateDayTotals(ctx context.Context, scope ports.Scope, since time.Time, cur domain.Currency) ([]ports.PaymentAggregate, error) {
	groups := func(model any) *bun.SelectQuery {
		q := whereScope(db.reads().NewSelect().Model(model), scope).
			ColumnExpr("?TableAlias.day, ?TableAlias.currency, ?TableAlias.status, ?TableAlias.paid_with").
			ColumnExpr("?TableAlias.n, ?TableAlias.volume, ?TableAlias.refunded").
			Where("?TableAlias.day >= ?", since.UTC().Format(time.DateOnly))
		if cur != "" {
			q = q.Where("?TableAlias.currency = ?", string(cur))
		}
		return q
	}
	var rows []aggregateRow
	err := db.reads().NewSelect().TableExpr("(?) AS g", groups((*dayTotalRow)(nil)).UnionAll(groups((*statDeltaRow)(nil)))).
		ColumnExpr("g.day, g.currency, g.status, g.paid_with").
		ColumnExpr("CAST(SUM(g.n) AS bigint) AS n, CAST(SUM(g.volume) AS bigint) AS volume, CAST(SUM(g.refunded) AS bigint) AS refunded").
		GroupExpr("g.day, g.currency, g.status, g.paid_with").
		// Groups every charge has left (all deltas cancelled) are not
		// groups a scan would return.
		Having("SUM(g.n) > 0").
		Scan(ctx, &rows)
	if err != nil {
		return nil, mapError(err)
	}
	return aggregatesToPort(rows), nil
}
