package store

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

var (
	_ ports.AcquirerAccountStore = (*DB)(nil)
	_ ports.PixReconcileMarks    = (*DB)(nil)
)

type acquirerAccountRow struct {
	bun.BaseModel `bun:"table:acquirer_accounts,alias:aa"`

	AccountID string `bun:"account_id,pk"`
	Provider  string `bun:"provider,pk"`
	Sealed    []byte `bun:"sealed"`
	CreatedAt dbTime `bun:"created_at"`
	UpdatedAt dbTime `bun:"updated_at"`
}

// PutAcquirerAccount implements ports.AcquirerAccountStore.
func (db *DB) PutAcquirerAccount(ctx context.Context, a ports.AcquirerAccount) error {
	return putAcquirerAccount(ctx, db.bun, a)
}

func putAcquirerAccount(ctx context.Context, idb bun.IDB, a ports.AcquirerAccount) error {
	row := &acquirerAccountRow{AccountID: a.AccountID, Provider: a.Provider, Sealed: a.Sealed,
		CreatedAt: newDBTime(a.UpdatedAt), UpdatedAt: newDBTime(a.UpdatedAt)}
	_, err := idb.NewInsert().Model(row).
		On("CONFLICT (account_id, provider) DO UPDATE").
		Set("sealed = EXCLUDED.sealed").
		Set("updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	return mapError(err)
}

// GetAcquirerAccount implements ports.AcquirerAccountStore.
func (db *DB) GetAcquirerAccount(ctx context.Context, accountID, provider string) (*ports.AcquirerAccount, error) {
	row := new(acquirerAccountRow)
	err := db.bun.NewSelect().Model(row).Where("aa.account_id = ?", accountID).Where("aa.provider = ?", provider).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return &ports.AcquirerAccount{AccountID: row.AccountID, Provider: row.Provider, Sealed: row.Sealed, UpdatedAt: row.UpdatedAt.Time}, nil
}

// ListAcquirerAccounts implements ports.AcquirerAccountStore.
func (db *DB) ListAcquirerAccounts(ctx context.Context, provider string) ([]ports.AcquirerAccount, error) {
	var rows []acquirerAccountRow
	err := db.bun.NewSelect().Model(&rows).Where("aa.provider = ?", provider).Order("aa.account_id").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.AcquirerAccount, 0, len(rows))
	for _, r := range rows {
		out = append(out, ports.AcquirerAccount{AccountID: r.AccountID, Provider: r.Provider, Sealed: r.Sealed, UpdatedAt: r.UpdatedAt.Time})
	}
	return out, nil
}

// FindChargeByTxID implements ports.AcquirerAccountStore.
func (db *DB) FindChargeByTxID(ctx context.Context, scope ports.Scope, txid string) (string, error) {
	var id string
	err := db.bun.NewSelect().Table("charges").Column("id").
		Where("account_id = ?", scope.AccountID).Where("mode = ?", string(scope.Mode)).Where("pix_txid = ?", txid).
		Limit(1).Scan(ctx, &id)
	if err != nil {
		return "", mapError(err)
	}
	return id, nil
}

type pixReconcileMarkRow struct {
	bun.BaseModel `bun:"table:pix_reconcile_marks,alias:prm"`

	AccountID         string `bun:"account_id,pk"`
	ReconciledThrough dbTime `bun:"reconciled_through"`
}

// PixReconciledThrough implements ports.PixReconcileMarks.
func (db *DB) PixReconciledThrough(ctx context.Context, accountID string) (time.Time, error) {
	row := new(pixReconcileMarkRow)
	err := mapError(db.bun.NewSelect().Model(row).Where("prm.account_id = ?", accountID).Scan(ctx))
	if errors.Is(err, ports.ErrNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return row.ReconciledThrough.Time, nil
}

// setPixReconcileMark moves an account's mark forward only: instants
// compare as time on Postgres and as fixed-width text on SQLite.
const setPixReconcileMark = `INSERT INTO pix_reconcile_marks (account_id, reconciled_through) VALUES (?, ?)
ON CONFLICT (account_id) DO UPDATE SET reconciled_through = excluded.reconciled_through
WHERE pix_reconcile_marks.reconciled_through < excluded.reconciled_through`

// SetPixReconciledThrough implements ports.PixReconcileMarks.
func (db *DB) SetPixReconciledThrough(ctx context.Context, accountID string, t time.Time) error {
	_, err := db.bun.ExecContext(ctx, setPixReconcileMark, accountID, newDBTime(t))
	return mapError(err)
}
