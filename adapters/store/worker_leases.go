package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

var _ ports.WorkerLeases = (*DB)(nil)

type workerLeaseRow struct {
	bun.BaseModel `bun:"table:worker_leases,alias:wl"`

	Name      string `bun:"name,pk"`
	Holder    string `bun:"holder"`
	ExpiresAt dbTime `bun:"expires_at"`
}

// HoldWorkerLease implements ports.WorkerLeases in one statement: the row
// is inserted, or taken over when its lease has expired or is holder's
// own; otherwise nothing changes and no row comes back.
func (db *DB) HoldWorkerLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	row := &workerLeaseRow{Name: name, Holder: holder, ExpiresAt: newDBTime(now.Add(ttl))}
	var got []string
	err := db.bun.NewInsert().Model(row).
		On("CONFLICT (name) DO UPDATE").
		Set("holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at").
		Where("wl.holder = EXCLUDED.holder OR wl.expires_at < ?", newDBTime(now)).
		Returning("holder").Scan(ctx, &got)
	if err != nil {
		return false, mapError(err)
	}
	return len(got) == 1, nil
}

// ReleaseWorkerLease implements ports.WorkerLeases.
func (db *DB) ReleaseWorkerLease(ctx context.Context, name, holder string) error {
	_, err := db.bun.NewDelete().Model((*workerLeaseRow)(nil)).
		Where("name = ?", name).Where("holder = ?", holder).Exec(ctx)
	return mapError(err)
}
