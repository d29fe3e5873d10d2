package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.PaymentStore = (*DB)(nil)

// paymentSortColumns maps every top-level field of the transaction read
// format to what orders it.
var paymentSortColumns = map[string]string{
	"id": "c.id", "status": "c.status", "amount": "c.amount", "currency": "c.currency",
	"paymentMethods": "c.methods", "paidWith": "c.settlement_paid_with",
	"pixQrCode": "c.pix_br_code", "pixCopyPaste": "c.pix_br_code", "pixExpiresAt": "c.pix_expires_at",
	"cardRedirectUrl": "c.card_redirect_url", "mbEntity": "c.mb_entity", "mbReference": "c.mb_reference",
	"mbExpiresAt": "c.mb_expires_at", "boletoBarcode": "c.boleto_barcode", "boletoLine": "c.boleto_line",
	"boletoPdfUrl": "c.boleto_pdf_url", "boletoExpiresAt": "c.boleto_expires_at",
	"cryptoAddress": "c.crypto_address", "cryptoNetwork": "c.crypto_network", "cryptoCurrency": "c.crypto_currency",
	"cryptoAmount": "c.crypto_amount", "providerFee": "c.fee_provider", "platformFee": "c.fee_platform",
	"netAmount": "(c.amount - c.fee_provider - c.fee_platform)", "metadata": "c.metadata",
	"createdAt": "c.created_at", "paidAt": "c.settlement_paid_at",
}

// ListPayments returns a page of the scope's charges and the total.
func (db *DB) ListPayments(ctx context.Context, q ports.PaymentQuery) ([]*domain.Charge, int, error) {
	if q.Limit < 1 || q.Limit > maxListLimit || q.Page < 1 {
		return nil, 0, fmt.Errorf("store: page %d limit %d out of range", q.Page, q.Limit)
	}
	col, ok := paymentSortColumns[q.SortBy]
	if q.SortBy == "" {
		col, ok = "c.created_at", true
	}
	if !ok {
		return nil, 0, domain.Invalid(domain.FieldSortBy,
			"%s must be a field of the transaction, such as createdAt, amount or status", domain.FieldSortBy)
	}
	filter := func(sel *bun.SelectQuery) *bun.SelectQuery {
		sel = whereScope(sel, q.Scope)
		if q.Status != "" {
			sel = sel.Where("c.status = ?", string(q.Status))
		}
		if q.CreatedAfter != nil {
			sel = sel.Where("c.created_at >= ?", ceilDBTime(*q.CreatedAfter))
		}
		if q.CreatedBefore != nil {
			sel = sel.Where("c.created_at <= ?", newDBTime(*q.CreatedBefore))
		}
		return sel
	}
	total, err := db.countPayments(ctx, q, filter)
	if err != nil {
		return nil, 0, err
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	var rows []chargeRow
	err = filter(db.reads().NewSelect().Model(&rows)).OrderExpr(col + dir + ", c.id" + dir).
		Limit(int64(q.Limit)).Offset(int64((q.Page - 1) * q.Limit)).Scan(ctx)
	if err != nil {
		return nil, 0, mapError(err)
	}
	out := make([]*domain.Charge, len(rows))
	for i := range rows {
		if out[i], err = rows[i].toDomain(); err != nil {
			return nil, 0, err
		}
	}
	return out, int(total), nil
}

// countPayments totals a list: from the status counters when no date
// bounds apply, by counting rows otherwise.
func (db *DB) countPayments(ctx context.Context, q ports.PaymentQuery, filter func(*bun.SelectQuery) *bun.SelectQuery) (int, error) {
	if q.CreatedAfter == nil && q.CreatedBefore == nil {
		n, err := db.countCharges(ctx, q.Scope, string(q.Status))
		return int(n), err
	}
	n, err := filter(db.reads().NewSelect().Model((*chargeRow)(nil))).Count(ctx)
	return int(n), mapError(err)
}

func (db *DB) dayExpr() string {
	if postgres(db.bun) {
		return "CAST(CAST(c.created_at AT TIME ZONE 'UTC' AS date) AS text)"
	}
	return "substr(c.created_at, 1, 10)"
}

// readTx runs fn in a read transaction; on Postgres with enough work_mem
// for the aggregate to hash in memory rather than sort on disk.
func (db *DB) readTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return db.reads().RunInTx(ctx, &sql.TxOptions{ReadOnly: postgres(db.reads())}, func(ctx context.Context, tx bun.Tx) error {
		if postgres(db.reads()) {
			if _, err := tx.ExecContext(ctx, "SET LOCAL work_mem = '32MB'"); err != nil {
				return err
			}
		}
		return fn(ctx, tx)
	})
}

// aggregateRow is one group of AggregatePayments, from the charges or
// from the per-day totals.
type aggregateRow struct {
	Day      string `bun:"day"`
	Currency string `bun:"currency"`
	Status   string `bun:"status"`
	PaidWith string `bun:"paid_with"`
	Count    int64  `bun:"n"`
	Volume   int64  `bun:"volume"`
	Refunded int64  `bun:"refunded"`
}

func aggregatesToPort(rows []aggregateRow) []ports.PaymentAggregate {
	out := make([]ports.PaymentAggregate, len(rows))
	for i, r := range rows {
		out[i] = ports.PaymentAggregate{Day: r.Day, Currency: domain.Currency(r.Currency), Status: domain.TxStatus(r.Status),
			PaidWith: domain.Method(r.PaidWith), Count: r.Count, Volume: r.Volume, Refunded: r.Refunded}
	}
	return out
}

// AggregatePayments groups charges for stats and metrics.
// Windows that start at a UTC midnight (all the service asks for) read the
// per-day totals; others scan the charges.
func (db *DB) AggregatePayments(ctx context.Context, scope ports.Scope, since time.Time, cur domain.Currency) ([]ports.PaymentAggregate, error) {
	if dayAligned(since) {
		return db.aggregateDayTotals(ctx, scope, since, cur)
	}
	var rows []aggregateRow
	err := db.readTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		q := whereScope(tx.NewSelect().Model((*chargeRow)(nil)), scope).
			ColumnExpr(db.dayExpr()+" AS day").ColumnExpr("c.currency, c.status").
			ColumnExpr("COALESCE(c.settlement_paid_with, '') AS paid_with").
			ColumnExpr("COUNT(*) AS n, SUM(c.amount) AS volume, SUM(c.refund_completed) AS refunded").
			Where("c.created_at >= ?", ceilDBTime(since)).GroupExpr("1, 2, 3, 4")
		if cur != "" {
			q = q.Where("c.currency = ?", string(cur))
		}
		return q.Scan(ctx, &rows)
	})
	if err != nil {
		return nil, mapError(err)
	}
	return aggregatesToPort(rows), nil
}

// MedianSecondsToPay is the median of paid_at − created_at of the charges
// created since and settled; nil when none settled. Postgres computes it;
// SQLite has no percentile function, so the durations are sorted here.
func (db *DB) MedianSecondsToPay(ctx context.Context, scope ports.Scope, since time.Time, cur domain.Currency) (*int64, error) {
	filter := func(q *bun.SelectQuery) *bun.SelectQuery {
		q = whereScope(q, scope).Where("c.created_at >= ?", ceilDBTime(since)).Where("c.settlement_paid_at IS NOT NULL")
		if cur != "" {
			q = q.Where("c.currency = ?", string(cur))
		}
		return q
	}
	if postgres(db.reads()) {
		var m sql.NullInt64
		err := db.readTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			return filter(tx.NewSelect().Model((*chargeRow)(nil))).
				ColumnExpr("CAST(percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (c.settlement_paid_at - c.created_at))) AS bigint)").
				Scan(ctx, &m)
		})
		if err != nil || !m.Valid {
			return nil, mapError(err)
		}
		return &m.Int64, nil
	}
	var secs []int64
	err := filter(db.reads().NewSelect().Model((*chargeRow)(nil))).
		ColumnExpr("CAST(round((julianday(c.settlement_paid_at) - julianday(c.created_at)) * 86400) AS INTEGER)").
		Scan(ctx, &secs)
	if err != nil {
		return nil, mapError(err)
	}
	if len(secs) == 0 {
		return nil, nil
	}
	slices.Sort(secs)
	m := secs[len(secs)/2]
	if len(secs)%2 == 0 {
		m = (secs[len(secs)/2-1] + secs[len(secs)/2] + 1) / 2
	}
	return &m, nil
}

// ListMethodsPending returns charges awaiting their method data.
func (db *DB) ListMethodsPending(ctx context.Context, before time.Time, limit int) ([]ports.ChargeRef, error) {
	pending := "c.methods_pending = 1"
	if postgres(db.bun) {
		pending = "c.methods_pending"
	}
	return listChargeRefs(ctx, db.bun, limit, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where(pending).Where("c.created_at <= ?", newDBTime(before)).OrderExpr("c.created_at, c.id")
	})
}
