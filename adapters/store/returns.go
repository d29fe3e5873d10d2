package store

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// pixReturnRow is a row of the pix_returns table. Every statement on that
// table is in this file.
type pixReturnRow struct {
	bun.BaseModel `bun:"table:pix_returns,alias:pr"`

	EndToEndID  string `bun:"end_to_end_id,pk"`
	AccountID   string `bun:"account_id"`
	Mode        string `bun:"mode"`
	ChargeID    string `bun:"charge_id"`
	Amount      int64  `bun:"amount"`
	Reason      string `bun:"reason"`
	Status      string `bun:"status"`
	Attempt     int    `bun:"attempt"`
	ProviderRef string `bun:"provider_ref"`
	Failure     string `bun:"failure"`
	DueAt       dbTime `bun:"due_at"`
	CreatedAt   dbTime `bun:"created_at"`
	UpdatedAt   dbTime `bun:"updated_at"`
}

func pixReturnFromDomain(r domain.PixReturn) pixReturnRow {
	return pixReturnRow{EndToEndID: r.EndToEndID, AccountID: r.AccountID, Mode: string(r.Mode), ChargeID: r.ChargeID,
		Amount: r.Amount, Reason: string(r.Reason), Status: string(r.Status), Attempt: r.Attempt, ProviderRef: r.ProviderRef,
		Failure: r.Failure, DueAt: newDBTime(r.DueAt), CreatedAt: newDBTime(r.CreatedAt), UpdatedAt: newDBTime(r.UpdatedAt)}
}

func (r *pixReturnRow) toDomain() domain.PixReturn {
	return domain.PixReturn{EndToEndID: r.EndToEndID, AccountID: r.AccountID, Mode: domain.Mode(r.Mode), ChargeID: r.ChargeID,
		Amount: r.Amount, Reason: domain.PixReturnReason(r.Reason), Status: domain.PixReturnStatus(r.Status), Attempt: r.Attempt,
		ProviderRef: r.ProviderRef, Failure: r.Failure, DueAt: r.DueAt.Time, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}
}

// GetPixReturn reads a return owed by the locked charge.
func (t *chargeTx) GetPixReturn(ctx context.Context, endToEndID string) (*domain.PixReturn, error) {
	row := new(pixReturnRow)
	if err := scopedByID(ctx, t.tx.NewSelect().Model(row), "pr.end_to_end_id", endToEndID, t.scope, &row.AccountID, &row.Mode); err != nil {
		return nil, err
	}
	if row.ChargeID != t.chargeID {
		return nil, ports.ErrNotFound
	}
	r := row.toDomain()
	return &r, nil
}

// pixReturnUpserts inserts returns, or moves on the ones that exist: what
// belongs to the Pix (account, charge, amount, reason, creation) never
// changes.
func pixReturnUpserts(tx bun.IDB, returns []domain.PixReturn) []schema.QueryAppender {
	qs := make([]schema.QueryAppender, 0, len(returns))
	for _, r := range returns {
		row := pixReturnFromDomain(r)
		qs = append(qs, tx.NewInsert().Model(&row).
			On("CONFLICT (end_to_end_id) DO UPDATE").
			Set("status = EXCLUDED.status, attempt = EXCLUDED.attempt, provider_ref = EXCLUDED.provider_ref, "+
				"failure = EXCLUDED.failure, due_at = EXCLUDED.due_at, updated_at = EXCLUDED.updated_at"))
	}
	return qs
}

// ClaimPixReturns implements ports.ChargeStore.
func (db *DB) ClaimPixReturns(ctx context.Context, now, leaseUntil time.Time, limit int) ([]domain.PixReturn, error) {
	if limit < 1 {
		return nil, errors.New("store: limit must be positive")
	}
	var rows []pixReturnRow
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewSelect().Model(&rows).
			Where("pr.status IN (?, ?)", string(domain.PixReturnRequested), string(domain.PixReturnInProgress)).
			Where("(pr.due_at IS NULL OR pr.due_at <= ?)", newDBTime(now)).
			OrderExpr("pr.due_at, pr.end_to_end_id").Limit(int64(limit))
		if postgres(tx) {
			q = q.For("UPDATE SKIP LOCKED")
		}
		if err := q.Scan(ctx); err != nil || len(rows) == 0 {
			return err
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.EndToEndID
		}
		_, err := tx.NewUpdate().Model((*pixReturnRow)(nil)).Set("due_at = ?", newDBTime(leaseUntil)).
			Where("end_to_end_id IN (?)", bun.List(ids)).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]domain.PixReturn, len(rows))
	for i := range rows {
		rows[i].DueAt = newDBTime(leaseUntil)
		out[i] = rows[i].toDomain()
	}
	return out, nil
}

// ListPixReturns implements ports.ChargeStore.
func (db *DB) ListPixReturns(ctx context.Context, status domain.PixReturnStatus, limit int) ([]domain.PixReturn, error) {
	if limit < 1 {
		return nil, errors.New("store: limit must be positive")
	}
	var rows []pixReturnRow
	err := db.bun.NewSelect().Model(&rows).Where("pr.status = ?", string(status)).
		OrderExpr("pr.created_at, pr.end_to_end_id").Limit(int64(min(limit, maxListLimit))).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]domain.PixReturn, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, nil
}
