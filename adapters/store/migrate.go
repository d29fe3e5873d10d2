package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/uptrace/bun/migrate"
)

// migrationFS holds the frozen SQL, one directory per dialect. The two
// directories hold the same migration names; a test checks it.
//
//go:embed migrations
var migrationFS embed.FS

// migrateLockKey is the Postgres advisory-lock key under which migrations
// run ("quita-migrate" folded into an int64). Any constant works as long as
// every quitad uses the same one.
const migrateLockKey int64 = 0x71756974616d6967

// migrations returns the dialect's migrations.
func migrations(dialect string) (*migrate.Migrations, error) {
	dir, err := fs.Sub(migrationFS, "migrations/"+dialect)
	if err != nil {
		return nil, err
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(dir); err != nil {
		return nil, err
	}
	return ms, nil
}

// Migrate brings the schema up to date. It is safe to call on every start
// and from several processes at once: on Postgres the migrator runs under a
// transaction-scoped advisory lock, so one process migrates while the others
// wait and then find nothing to do. SQLite is a single-process database here
// (the embedded default), so it takes no extra lock.
//
// Each migration runs in its own transaction and is recorded only after it
// committed, so a failed one is retried on the next start.
func (db *DB) Migrate(ctx context.Context) error {
	ms, err := migrations(db.dialect)
	if err != nil {
		return fmt.Errorf("store: load migrations: %w", err)
	}
	run := func(ctx context.Context) error {
		m := migrate.NewMigrator(db.bun, ms, migrate.WithMarkAppliedOnSuccess(true))
		// Init creates bun's bookkeeping tables; under the lock, because
		// concurrent CREATE TABLE IF NOT EXISTS can still collide on Postgres.
		if err := m.Init(ctx); err != nil {
			return fmt.Errorf("store: init migrations: %w", err)
		}
		if _, err := m.Migrate(ctx); err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		return nil
	}
	if db.dialect != DialectPostgres {
		return run(ctx)
	}
	// The lock lives in a transaction on its own connection while the
	// migrations run on others; ending the transaction releases it, so it
	// cannot leak into the pool even when a migration fails.
	tx, err := db.bun.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // releases the lock; nothing was written
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", migrateLockKey); err != nil {
		return fmt.Errorf("store: migrate: take lock: %w", err)
	}
	return run(ctx)
}
