package store

import (
	"context"

	"github.com/quitapix/quita/ports"
)

// FindSubscriptionByRecID implements ports.SubscriptionStore (the index
// subscriptions_rec_idx).
func (db *DB) FindSubscriptionByRecID(ctx context.Context, scope ports.Scope, recID string) (string, error) {
	if recID == "" {
		return "", ports.ErrNotFound
	}
	var id string
	err := db.bun.NewSelect().Table("subscriptions").Column("id").Where("rec_id = ?", recID).
		Where("account_id = ?", scope.AccountID).Where("mode = ?", string(scope.Mode)).Limit(1).Scan(ctx, &id)
	if err != nil {
		return "", mapError(err)
	}
	return id, nil
}

// FindCycleByTxID implements ports.SubscriptionStore (subscription_cycles'
// unique txid).
func (db *DB) FindCycleByTxID(ctx context.Context, scope ports.Scope, txid string) (ports.CycleRef, error) {
	row := new(cycleRow)
	err := db.bun.NewSelect().Model(row).Column("subscription_id", "cycle", "account_id", "mode").Where("sc.txid = ?", txid).Scan(ctx)
	if err != nil {
		return ports.CycleRef{}, mapError(err)
	}
	if row.AccountID != scope.AccountID || row.Mode != string(scope.Mode) {
		return ports.CycleRef{}, ports.ErrNotFound
	}
	return ports.CycleRef{Scope: scope, SubscriptionID: row.SubscriptionID, Cycle: int(row.Cycle)}, nil
}
