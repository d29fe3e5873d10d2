package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.IdempotencyStore = (*DB)(nil)

type providerIntentRow struct {
	bun.BaseModel `bun:"table:provider_intents,alias:pi"`

	AccountID string `bun:"account_id,pk"`
	Mode      string `bun:"mode,pk"`
	IdemKey   string `bun:"idem_key,pk"`
	TxID      string `bun:"txid"`
	CreatedAt dbTime `bun:"created_at"`
}

// RecordProviderIntent implements ports.IdempotencyStore.
func (db *DB) RecordProviderIntent(ctx context.Context, in ports.ProviderIntent) error {
	return db.charges.recordIntent(ctx, in)
}

// IdempotencyRecordOrIntent implements ports.IdempotencyStore.
func (db *DB) IdempotencyRecordOrIntent(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
	return db.charges.recordOrIntent(ctx, in)
}

// ProviderIntentsBefore implements ports.IdempotencyStore.
func (db *DB) ProviderIntentsBefore(ctx context.Context, t time.Time, limit int) ([]ports.ProviderIntent, error) {
	var rows []providerIntentRow
	err := db.bun.NewSelect().Model(&rows).Where("pi.created_at < ?", newDBTime(t)).
		OrderExpr("pi.created_at").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.ProviderIntent, len(rows))
	for i, r := range rows {
		out[i] = ports.ProviderIntent{TxID: r.TxID, CreatedAt: r.CreatedAt.Time, Key: ports.IdempotencyKey{
			Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)}, Key: r.IdemKey}}
	}
	return out, nil
}

// DeleteProviderIntent implements ports.IdempotencyStore.
func (db *DB) DeleteProviderIntent(ctx context.Context, key ports.IdempotencyKey) error {
	_, err := db.bun.NewDelete().Model((*providerIntentRow)(nil)).Where("account_id = ?", key.AccountID).
		Where("mode = ?", string(key.Mode)).Where("idem_key = ?", key.Key).Exec(ctx)
	return mapError(err)
}
