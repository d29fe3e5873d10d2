package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// replica is a read-only pool on a hot standby (or a balancer over
// several), which serves the reads that may lag the primary.
type replica struct {
	bun  *bun.DB
	pool *pgxpool.Pool
}

// UseReadReplica sends the reads that may lag the primary to the Postgres
// at dsn, a streaming replica of this store's database: the merchant-facing
// lists (charges, payments, refunds, payouts, subscriptions and their
// charges, events, deliveries, request logs, the audit log), the delivery
// stats and the payment aggregates that stats and metrics read. Everything
// else — every write, every read of one resource by id, every read a
// decision rests on (workers, idempotency, the ledger) — stays on the
// primary, so a GET right after its write always sees it, while a list
// may miss the newest rows for the replica's replay lag (docs/cluster.md).
// A read that cannot get a replica connection (the replica restarting to
// follow a new primary, or down) is served by the primary instead.
// Call it once, before serving; Close closes the replica too.
func (db *DB) UseReadReplica(ctx context.Context, dsn string) error {
	if db.dialect != DialectPostgres {
		return errors.New("store: a read replica needs Postgres")
	}
	cfg, err := pgConfig(dsn)
	if err != nil {
		return fmt.Errorf("store: read replica: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("store: read replica: %w", err)
	}
	replicaConn := acquireWithin{stdlib.GetPoolConnector(pool, stdlib.OptionResetSession(resetSession)), poolAcquireTimeout}
	sqldb := sql.OpenDB(guardedConnector{fallbackConnector{replica: replicaConn, primary: db.primary}})
	sqldb.SetMaxIdleConns(0)
	r := &replica{bun: bun.NewDB(sqldb, pgdialect.New()), pool: pool}
	// The replica itself, not its fallback: a read DSN that reaches
	// nothing is a configuration error to refuse at start.
	if err := pool.Ping(ctx); err != nil {
		r.close()
		return fmt.Errorf("store: read replica: ping: %w", err)
	}
	db.replica = r
	return nil
}

// reads is where the reads that may lag go: the replica when there is
// one, else the primary.
func (db *DB) reads() *bun.DB {
	if db.replica != nil {
		return db.replica.bun
	}
	return db.bun
}

func (r *replica) close() {
	_ = r.bun.Close()
	r.pool.Close()
}

// fallbackConnector hands out a replica connection, or a primary one when
// no replica connection can be had: the read that needed it then sees the
// primary, never an outage the primary could have served. A statement
// that fails on a replica connection it already has is not retried.
type fallbackConnector struct {
	replica, primary driver.Connector
}

func (c fallbackConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.replica.Connect(ctx)
	if err != nil && ctx.Err() == nil && unavailable(err) {
		return c.primary.Connect(ctx)
	}
	return conn, err
}

func (c fallbackConnector) Driver() driver.Driver { return c.replica.Driver() }
