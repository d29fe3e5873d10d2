package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// claimLeases runs the select that pick returns (with FOR UPDATE SKIP
// LOCKED on Postgres, so concurrent workers in any process pick different
// rows) and sets lease_until on the rows whose ids it then names, in one
// transaction.
func (db *DB) claimLeases(ctx context.Context, model any, leaseUntil time.Time,
	pick func(tx bun.Tx) (*bun.SelectQuery, func() []string),
) error {
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q, picked := pick(tx)
		if postgres(tx) {
			q = q.For("UPDATE SKIP LOCKED")
		}
		if err := q.Scan(ctx); err != nil {
			return err
		}
		ids := picked()
		if len(ids) == 0 {
			return nil
		}
		_, err := tx.NewUpdate().Model(model).Set("lease_until = ?", newDBTime(leaseUntil)).
			Where("id IN (?)", bun.List(ids)).Exec(ctx)
		return err
	})
	return mapError(err)
}

// ClaimPayouts implements ports.PayoutStore.
func (db *DB) ClaimPayouts(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ports.PayoutRef, error) {
	var rows []payoutRow
	err := db.claimLeases(ctx, (*payoutRow)(nil), leaseUntil, func(tx bun.Tx) (*bun.SelectQuery, func() []string) {
		q := tx.NewSelect().Model(&rows).Column("id", "account_id", "mode").
			Where("po.status IN ('pending', 'processing')").
			Where("(po.lease_until IS NULL OR po.lease_until <= ?)", newDBTime(now)).
			OrderExpr("po.created_at, po.id").Limit(int64(limit))
		return q, func() []string {
			ids := make([]string, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			return ids
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]ports.PayoutRef, len(rows))
	for i, r := range rows {
		out[i] = ports.PayoutRef{Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)}, ID: r.ID}
	}
	return out, nil
}

// FindPayoutBySendID implements ports.PayoutStore.
func (db *DB) FindPayoutBySendID(ctx context.Context, sendID string) (ports.PayoutRef, error) {
	row := new(payoutRow)
	err := db.bun.NewSelect().Model(row).Column("id", "account_id", "mode").Where("po.send_id = ?", sendID).Scan(ctx)
	if err != nil {
		return ports.PayoutRef{}, mapError(err)
	}
	return ports.PayoutRef{Scope: ports.Scope{AccountID: row.AccountID, Mode: domain.Mode(row.Mode)}, ID: row.ID}, nil
}
