package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

type payerVelocityRow struct {
	bun.BaseModel `bun:"table:payer_velocity,alias:pv"`

	AccountID string `bun:"account_id,pk"`
	Mode      string `bun:"mode,pk"`
	IdemKey   string `bun:"idem_key,pk"`
	Payer     string `bun:"payer"`
	CreatedAt dbTime `bun:"created_at"`
}

// AdmitPayerCharge implements ports.GuardStore. On Postgres a
// transaction-scoped advisory lock on the (account, mode, payer) triple
// serialises the count and the insert of concurrent creates for one
// payer, and only theirs; SQLite runs one transaction at a time anyway.
func (db *DB) AdmitPayerCharge(ctx context.Context, a ports.PayerAdmission) (bool, error) {
	admitted := false
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if postgres(tx) {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
				"quita/velocity/"+a.Scope.AccountID+"/"+string(a.Scope.Mode)+"/"+a.Payer); err != nil {
				return err
			}
		}
		seen, err := tx.NewSelect().Model((*payerVelocityRow)(nil)).
			Where("account_id = ?", a.Scope.AccountID).Where("mode = ?", string(a.Scope.Mode)).
			Where("idem_key = ?", a.Key).Exists(ctx)
		if err != nil || seen {
			admitted = seen // a retry of an admitted request
			return err
		}
		n, err := tx.NewSelect().Model((*payerVelocityRow)(nil)).
			Where("account_id = ?", a.Scope.AccountID).Where("mode = ?", string(a.Scope.Mode)).
			Where("payer = ?", a.Payer).Where("created_at >= ?", ceilDBTime(a.Since)).Count(ctx)
		if err != nil || int(n) >= a.Max {
			return err
		}
		_, err = tx.NewInsert().Model(&payerVelocityRow{AccountID: a.Scope.AccountID, Mode: string(a.Scope.Mode),
			IdemKey: a.Key, Payer: a.Payer, CreatedAt: newDBTime(a.Now)}).Exec(ctx)
		admitted = err == nil
		return err
	})
	return admitted, mapError(err)
}

// DeletePayerAdmissionsBefore implements ports.DashboardHousekeeping.
func (db *DB) DeletePayerAdmissionsBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	sub := db.bun.NewSelect().Model((*payerVelocityRow)(nil)).Column("pv.idem_key").
		Where("pv.created_at < ?", newDBTime(t)).Limit(int64(limit))
	res, err := db.bun.NewDelete().Model((*payerVelocityRow)(nil)).
		Where("created_at < ?", newDBTime(t)).Where("idem_key IN (?)", sub).Exec(ctx)
	if err != nil {
		return 0, mapError(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
