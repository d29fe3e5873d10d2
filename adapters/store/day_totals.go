package store

import (
	"cmp"
	"context"
	"hash/fnv"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// dayTotalRow is one group of charge_day_totals: the charges of an account
// created on one UTC day, by currency, status and settlement method, in one
// of countShards shards (by charge id, as charge_counts). Each charge
// counts in exactly one group at any time with its amount and confirmed
// refunds, so summing the shards gives what a scan of the charges would.
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

func shardOf(chargeID string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(chargeID))
	return int(h.Sum32() % countShards)
}

func (a dayShardKey) compare(b dayShardKey) int {
	return cmp.Or(cmp.Compare(a.accountID, b.accountID), cmp.Compare(a.mode, b.mode), cmp.Compare(a.day, b.day),
		cmp.Compare(a.currency, b.currency), cmp.Compare(a.status, b.status), cmp.Compare(a.paidWith, b.paidWith),
		cmp.Compare(a.shard, b.shard))
}

func dayTotalShardDelta(idb bun.IDB, k dayShardKey, n, volume, refunded int64) schema.QueryAppender {
	return idb.NewInsert().Model(&dayTotalRow{AccountID: k.accountID, Mode: k.mode, Day: k.day, Currency: k.currency,
		Status: k.status, PaidWith: k.paidWith, Shard: k.shard, N: n, Volume: volume, Refunded: refunded}).
		On("CONFLICT (account_id, mode, day, currency, status, paid_with, shard) DO UPDATE").
		Set("n = dt.n + EXCLUDED.n, volume = dt.volume + EXCLUDED.volume, refunded = dt.refunded + EXCLUDED.refunded")
}

// dayTotalsInsert is the delta of a new charge.
func dayTotalsInsert(idb bun.IDB, row *chargeRow) schema.QueryAppender {
	return dayTotalShardDelta(idb, dayShardKey{row.AccountID, row.Mode, dayTotalKeyOf(row, row.CreatedAt), shardOf(row.ID)},
		1, row.Amount, row.RefundCompleted)
}

// dayAligned reports whether since is a UTC midnight, where the per-day
// totals answer exactly what a scan from since would.
func dayAligned(since time.Time) bool {
	u := since.UTC()
	return u.Equal(u.Truncate(24 * time.Hour))
}

// aggregateDayTotals is AggregatePayments from the per-day totals: a few
// rows per day instead of every charge of the window.
func (db *DB) aggregateDayTotals(ctx context.Context, scope ports.Scope, since time.Time, cur domain.Currency) ([]ports.PaymentAggregate, error) {
	var rows []aggregateRow
	q := whereScope(db.bun.NewSelect().Model((*dayTotalRow)(nil)), scope).
		ColumnExpr("dt.day, dt.currency, dt.status, dt.paid_with").
		ColumnExpr("CAST(SUM(dt.n) AS bigint) AS n, CAST(SUM(dt.volume) AS bigint) AS volume, CAST(SUM(dt.refunded) AS bigint) AS refunded").
		Where("dt.day >= ?", since.UTC().Format(time.DateOnly)).
		GroupExpr("dt.day, dt.currency, dt.status, dt.paid_with").
		// Groups every charge has left (all deltas cancelled) are not
		// groups a scan would return.
		Having("SUM(dt.n) > 0")
	if cur != "" {
		q = q.Where("dt.currency = ?", string(cur))
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, mapError(err)
	}
	return aggregatesToPort(rows), nil
}
