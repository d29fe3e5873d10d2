package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.SubaccountStore = (*DB)(nil)

// CreateSubaccount implements ports.SubaccountStore.
func (db *DB) CreateSubaccount(ctx context.Context, a domain.Account) error {
	if a.ParentAccountID == "" {
		return fmt.Errorf("store: sub-account %s has no platform", a.ID)
	}
	row, err := db.sealedAccountRow(a)
	if err != nil {
		return err
	}
	_, err = db.bun.NewInsert().Model(row).Exec(ctx)
	return mapError(err)
}

// sealedAccountRow is a's row with its transaction secrets sealed.
func (db *DB) sealedAccountRow(a domain.Account) (*accountRow, error) {
	row := accountFromDomain(a)
	var err error
	if row.TransactionWebhookSecret, err = db.sealSecret(transactionSecretOwner(a.ID, "live"), row.TransactionWebhookSecret); err != nil {
		return nil, err
	}
	if row.TestTransactionWebhookSecret, err = db.sealSecret(transactionSecretOwner(a.ID, "test"), row.TestTransactionWebhookSecret); err != nil {
		return nil, err
	}
	return row, nil
}

// subaccountByID selects the sub-account id of platformID (FOR UPDATE on
// Postgres when lock; SQLite's write transaction holds the lock already).
func subaccountByID(idb bun.IDB, row *accountRow, platformID, id string, lock bool) *bun.SelectQuery {
	q := idb.NewSelect().Model(row).Where("a.id = ?", id).Where("a.parent_account_id = ?", platformID)
	if lock && postgres(idb) {
		q = q.For("UPDATE")
	}
	return q
}

// GetSubaccount implements ports.SubaccountStore.
func (db *DB) GetSubaccount(ctx context.Context, platformID, id string) (*domain.Account, error) {
	row := new(accountRow)
	if err := subaccountByID(db.bun, row, platformID, id, false).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	return db.accountToDomain(row)
}

// ListSubaccounts implements ports.SubaccountStore.
func (db *DB) ListSubaccounts(ctx context.Context, q ports.SubaccountQuery) ([]domain.Account, bool, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var rows []accountRow
	sel := db.bun.NewSelect().Model(&rows).Where("a.parent_account_id = ?", q.PlatformID)
	if q.StartingAfter != "" {
		cur := new(accountRow)
		if err := subaccountByID(db.bun, cur, q.PlatformID, q.StartingAfter, false).Column("created_at").Scan(ctx); err != nil {
			return nil, false, mapError(err)
		}
		sel = sel.Where("(a.created_at, a.id) < (?, ?)", cur.CreatedAt, q.StartingAfter)
	}
	if err := sel.OrderExpr("a.created_at DESC, a.id DESC").Limit(int64(q.Limit) + 1).Scan(ctx); err != nil {
		return nil, false, mapError(err)
	}
	more := len(rows) > q.Limit
	rows = rows[:min(len(rows), q.Limit)]
	out := make([]domain.Account, len(rows))
	for i := range rows {
		a, err := db.accountToDomain(&rows[i])
		if err != nil {
			return nil, false, err
		}
		out[i] = *a
	}
	return out, more, nil
}

// UpdateSubaccount implements ports.SubaccountStore.
func (db *DB) UpdateSubaccount(ctx context.Context, platformID, id string, fn func(domain.Account) (domain.Account, error)) (*domain.Account, error) {
	var out *domain.Account
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row := new(accountRow)
		if err := subaccountByID(tx, row, platformID, id, true).Scan(ctx); err != nil {
			return mapError(err)
		}
		cur, err := db.accountToDomain(row)
		if err != nil {
			return err
		}
		next, err := fn(*cur)
		if err != nil {
			return err
		}
		nr := accountFromDomain(next)
		_, err = tx.NewUpdate().Model(nr).Column("name", "merchant_name", "email", "payout_pix_key_type", "payout_pix_key", "auto_payout").
			Where("a.id = ?", id).Where("a.parent_account_id = ?", platformID).Exec(ctx)
		if err != nil {
			return mapError(err)
		}
		out = &next
		return nil
	})
	return out, mapError(err)
}

// DisableSubaccount implements ports.SubaccountStore. The sessions of the
// sub-account's users are cut off when it is disabled, not again when it
// is disabled once more.
func (db *DB) DisableSubaccount(ctx context.Context, platformID, id string, at time.Time) (*domain.Account, error) {
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*accountRow)(nil)).Set("disabled_at = ?", newDBTime(at)).
			Where("a.id = ?", id).Where("a.parent_account_id = ?", platformID).Where("a.disabled_at IS NULL").Exec(ctx)
		if err != nil {
			return mapError(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		var users []string
		if err := tx.NewSelect().Model((*userRow)(nil)).Column("u.id").Where("u.account_id = ?", id).Scan(ctx, &users); err != nil {
			return mapError(err)
		}
		for _, u := range users {
			_, err := tx.NewInsert().Model(&sessionCutoffRow{UserID: u, NotBefore: newDBTime(at)}).
				On("CONFLICT (user_id) DO UPDATE").Set("not_before = CASE WHEN EXCLUDED.not_before > sc.not_before THEN EXCLUDED.not_before ELSE sc.not_before END").
				Exec(ctx)
			if err != nil {
				return mapError(err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, mapError(err)
	}
	return db.GetSubaccount(ctx, platformID, id)
}

// LiveSubaccounts implements ports.SubaccountStore.
func (db *DB) LiveSubaccounts(ctx context.Context, platformID string, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var found []string
	err := db.bun.NewSelect().Model((*accountRow)(nil)).Column("a.id").
		Where("a.id IN (?)", bun.List(ids)).Where("a.parent_account_id = ?", platformID).Where("a.disabled_at IS NULL").
		Scan(ctx, &found)
	if err != nil {
		return nil, mapError(err)
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// DueAutoPayouts implements ports.SubaccountStore.
func (db *DB) DueAutoPayouts(ctx context.Context, day string, limit int) ([]domain.Account, error) {
	var rows []accountRow
	err := db.bun.NewSelect().Model(&rows).Where("a.auto_payout = ?", true).Where("a.parent_account_id IS NOT NULL").
		Where("a.disabled_at IS NULL").Where("a.auto_payout_day <> ?", day).OrderExpr("a.id").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]domain.Account, len(rows))
	for i := range rows {
		a, err := db.accountToDomain(&rows[i])
		if err != nil {
			return nil, err
		}
		out[i] = *a
	}
	return out, nil
}

// MarkAutoPayout implements ports.SubaccountStore.
func (db *DB) MarkAutoPayout(ctx context.Context, id, day string) error {
	_, err := db.bun.NewUpdate().Model((*accountRow)(nil)).Set("auto_payout_day = ?", day).Where("a.id = ?", id).Exec(ctx)
	return mapError(err)
}
