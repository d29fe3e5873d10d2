package store

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quitapix/quita/adapters/store/pgfast"
	"github.com/quitapix/quita/internal/testenv"
)

// openMigratedPostgres opens a store on a test database of its own.
func openMigratedPostgres(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// fastPool is the pool of db's chargePath on Postgres (pgCharges).
func fastPool(db *DB) *pgfast.Pool { return db.charges.(*pgCharges).pool }

// migratedFastConn is openMigratedPostgres with one connection of its
// pgfast pool held for the test.
func migratedFastConn(t *testing.T) (*DB, *pgxpool.Conn) {
	t.Helper()
	db := openMigratedPostgres(t)
	conn, err := fastPool(db).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release)
	return db, conn
}
