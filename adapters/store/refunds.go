package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// refundRow is a row of the refunds table. Every statement on that table
// is in this file.
type refundRow struct {
	bun.BaseModel `bun:"table:refunds,alias:r"`

	ID             string `bun:"id,pk"`
	AccountID      string `bun:"account_id"`
	Mode           string `bun:"mode"`
	ChargeID       string `bun:"charge_id"`
	Amount         int64  `bun:"amount"`
	Currency       string `bun:"currency"`
	Status         string `bun:"status"`
	Reason         string `bun:"reason"`
	Strategy       string `bun:"strategy"`
	PassFee        bool   `bun:"pass_fee"`
	DestinationKey string `bun:"destination_key"`
	Fee            int64  `bun:"fee"`
	EndToEndID     string `bun:"end_to_end_id"`
	ProviderRef    string `bun:"provider_ref"`
	CreatedAt      dbTime `bun:"created_at"`
	UpdatedAt      dbTime `bun:"updated_at"`
}

func refundFromDomain(r domain.Refund) refundRow {
	return refundRow{ID: r.ID, AccountID: r.AccountID, Mode: string(r.Mode), ChargeID: r.ChargeID, Amount: r.Amount,
		Currency: string(r.Currency), Status: string(r.Status), Reason: r.Reason, Strategy: string(r.Strategy),
		PassFee: r.PassFeeToTenant, DestinationKey: r.DestinationKey, Fee: r.Fee, EndToEndID: r.EndToEndID,
		ProviderRef: r.ProviderRef, CreatedAt: newDBTime(r.CreatedAt), UpdatedAt: newDBTime(r.UpdatedAt)}
}

func (r *refundRow) toDomain() domain.Refund {
	return domain.Refund{ID: r.ID, AccountID: r.AccountID, Mode: domain.Mode(r.Mode), ChargeID: r.ChargeID, Amount: r.Amount,
		Currency: domain.Currency(r.Currency), Status: domain.RefundStatus(r.Status), Reason: r.Reason,
		Strategy: domain.RefundStrategy(r.Strategy), PassFeeToTenant: r.PassFee, DestinationKey: r.DestinationKey,
		Fee: r.Fee, EndToEndID: r.EndToEndID, ProviderRef: r.ProviderRef, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}
}

// ListRefunds returns a charge's refunds, newest first.
func (db *DB) ListRefunds(ctx context.Context, scope ports.Scope, chargeID string) ([]domain.Refund, error) {
	var rows []refundRow
	err := whereScope(db.bun.NewSelect().Model(&rows), scope).Where("r.charge_id = ?", chargeID).
		OrderExpr("r.created_at DESC, r.id DESC").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]domain.Refund, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, nil
}

// ListScopeRefunds returns a page of the scope's refunds, newest first.
func (db *DB) ListScopeRefunds(ctx context.Context, q ports.RefundQuery) ([]domain.Refund, bool, error) {
	limit := min(max(q.Limit, 1), maxListLimit)
	var rows []refundRow
	err := whereScope(db.reads().NewSelect().Model(&rows), q.Scope).OrderExpr("r.created_at DESC, r.id DESC").
		Limit(int64(limit + 1)).Offset(int64(max(q.Offset, 0))).Scan(ctx)
	if err != nil {
		return nil, false, mapError(err)
	}
	more := len(rows) > limit
	rows = rows[:min(len(rows), limit)]
	out := make([]domain.Refund, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, more, nil
}

// FindRefund finds a refund of the scope.
func (db *DB) FindRefund(ctx context.Context, scope ports.Scope, id string) (*domain.Refund, error) {
	row := new(refundRow)
	if err := scopedByID(ctx, db.bun.NewSelect().Model(row), "r.id", id, scope, &row.AccountID, &row.Mode); err != nil {
		return nil, err
	}
	r := row.toDomain()
	return &r, nil
}

// ClaimOpenRefunds implements ports.PaymentStore.
func (db *DB) ClaimOpenRefunds(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ports.OpenRefund, error) {
	var rows []refundRow
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewSelect().Model(&rows).
			Where("r.status IN ('PENDING', 'IN_PROGRESS')").
			Where("(r.lease_until IS NULL OR r.lease_until <= ?)", newDBTime(now)).
			OrderExpr("r.updated_at, r.id").Limit(int64(limit))
		if postgres(tx) {
			q = q.For("UPDATE SKIP LOCKED")
		}
		if err := q.Scan(ctx); err != nil || len(rows) == 0 {
			return err
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		_, err := tx.NewUpdate().Model((*refundRow)(nil)).Set("lease_until = ?", newDBTime(leaseUntil)).
			Where("id IN (?)", bun.List(ids)).Exec(ctx)
		return err
	})
	if err != nil || len(rows) == 0 {
		return nil, mapError(err)
	}
	// How each charge was paid decides how the acquirer refunds it.
	charges := make([]string, len(rows))
	for i, r := range rows {
		charges[i] = r.ChargeID
	}
	var paid []struct {
		ID       string  `bun:"id"`
		PaidWith *string `bun:"settlement_paid_with"`
		Payer    *string `bun:"settlement_payer_tax_id"`
	}
	if err := db.bun.NewSelect().Table("charges").Column("id", "settlement_paid_with", "settlement_payer_tax_id").
		Where("id IN (?)", bun.List(charges)).Scan(ctx, &paid); err != nil {
		return nil, mapError(err)
	}
	type payment struct {
		method domain.Method
		payer  string
	}
	byCharge := make(map[string]payment, len(paid))
	for _, p := range paid {
		byCharge[p.ID] = payment{domain.Method(deref(p.PaidWith)), deref(p.Payer)}
	}
	out := make([]ports.OpenRefund, len(rows))
	for i := range rows {
		p := byCharge[rows[i].ChargeID]
		out[i] = ports.OpenRefund{Refund: rows[i].toDomain(), PaidWith: p.method, PayerTaxID: p.payer}
	}
	return out, nil
}

// GetRefund reads a refund of the locked charge.
func (t *chargeTx) GetRefund(ctx context.Context, id string) (*domain.Refund, error) {
	row := new(refundRow)
	if err := scopedByID(ctx, t.tx.NewSelect().Model(row), "r.id", id, t.scope, &row.AccountID, &row.Mode); err != nil {
		return nil, err
	}
	if row.ChargeID != t.chargeID {
		return nil, ports.ErrNotFound
	}
	r := row.toDomain()
	return &r, nil
}

// refundUpserts inserts refunds, or moves on the ones that exist: only
// their status, provider reference, end-to-end id and update time change.
func refundUpserts(tx bun.IDB, refunds []domain.Refund) []schema.QueryAppender {
	qs := make([]schema.QueryAppender, 0, len(refunds))
	for _, r := range refunds {
		rr := refundFromDomain(r)
		qs = append(qs, tx.NewInsert().Model(&rr).
			On("CONFLICT (id) DO UPDATE").
			Set("status = EXCLUDED.status, provider_ref = EXCLUDED.provider_ref, end_to_end_id = EXCLUDED.end_to_end_id, updated_at = EXCLUDED.updated_at"))
	}
	return qs
}
