// Package store keeps Quita's state in PostgreSQL (production) or SQLite
// (the embedded default) through one bun code base.
//
// The dialects differ only where they must: the frozen SQL of the
// migrations (migrations/postgres, migrations/sqlite), row locking
// (SELECT ... FOR UPDATE on Postgres; on SQLite every transaction takes the
// database write lock when it begins), and how an instant is written (see
// dbTime). Everything else — row structs, queries, error mapping — is shared
// and covered by one contract test suite run against both.
//
// Functions that run queries take bun.IDB, so they compose inside RunInTx;
// the methods of DB implement the ports on top of them.
package store

import (
	"context"
	"crypto/cipher"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

// Dialect names returned by (*DB).Dialect.
const (
	DialectPostgres = "postgres"
	DialectSQLite   = "sqlite"
)

// DB is a store on one database. It is safe for concurrent use.
type DB struct {
	bun     *bun.DB
	dialect string
	// secrets seals webhook secrets at rest (secrets.go); nil: in clear.
	secrets cipher.AEAD
	// closePool releases what sits below database/sql (the pgx pool).
	closePool func()
	// poolSize is the most connections the store opens at once.
	poolSize int
	// signals wakes workers when work commits (signals.go).
	signals *signals
	// pool is the pgx pool on Postgres (nil on SQLite), for PoolStats.
	pool *pgxpool.Pool
	// charges writes creates and reads what every create reads
	// (chargepath.go): pgCharges on Postgres, sqlCharges on SQLite.
	charges chargePath
	// payouts batches concurrent payout creates (CreatePayout); nil on
	// SQLite.
	payouts *groupcommit.Group[payoutCreate, struct{}]
	// refunds batches concurrent refund creates (RefundCharge).
	refunds *groupcommit.Group[refundCreate, struct{}]
	// eventScan, when > 0, replaces ports.MaxEventScan (tests).
	eventScan int
	// replica, when set, serves the reads that may lag (replica.go).
	replica *replica
	// primary hands out the primary's pooled connections (nil on
	// SQLite); the replica's falls back to it.
	primary driver.Connector
}

// PoolStats is what the connection pool did so far, for benchmarks and
// overload diagnosis.
type PoolStats struct {
	Size, InUse int
	// Acquires counts connections handed out; Waited those that had to
	// wait for one, and WaitTime is the total time spent waiting.
	Acquires, Waited int64
	WaitTime         time.Duration
}

// PoolStats reports the pool's counters (zero on SQLite).
func (db *DB) PoolStats() PoolStats {
	if db.pool == nil {
		return PoolStats{}
	}
	st := db.pool.Stat()
	return PoolStats{Size: int(st.MaxConns()), InUse: int(st.AcquiredConns()), Acquires: st.AcquireCount(),
		Waited: st.EmptyAcquireCount(), WaitTime: st.EmptyAcquireWaitTime()}
}

var (
	_ ports.ChargeStore      = (*DB)(nil)
	_ ports.IdempotencyStore = (*DB)(nil)
	_ ports.AccountStore     = (*DB)(nil)
	_ ports.KeyStore         = (*DB)(nil)
	_ ports.EventOutbox      = (*DB)(nil)
)

// Open connects to the database named by dsn and checks that it answers:
//
//	postgres://user@host:5432/db?sslmode=disable   (also postgresql://)
//	sqlite:/path/to/quita.db                       (created when missing)
//	sqlite::memory:                                (gone when closed)
//
// Open does not migrate; call Migrate.
func Open(ctx context.Context, dsn string) (*DB, error) {
	var (
		db  *DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(ctx, dsn)
	case strings.HasPrefix(dsn, "sqlite:"):
		db, err = openSQLite(strings.TrimPrefix(dsn, "sqlite:"))
	default:
		// Never echo the DSN: it may hold a password.
		return nil, errors.New("store: unsupported database URL (want postgres://..., postgresql://... or sqlite:<path>)")
	}
	if err != nil {
		return nil, err
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: ping: %w", db.dialect, err)
	}
	return db, nil
}

// DefaultBackendFlushAfter is Postgres's backend_flush_after on Quita's
// connections unless the DSN names it (openPostgres).
const DefaultBackendFlushAfter = "256kB"

// sessionDefaults are the settings Quita's connections ask for in their
// startup packet unless the DSN names them (a DSN's value wins, so an
// operator can turn either back):
//   - backend_flush_after: a burst of creates dirties more pages than
//     shared_buffers holds, and the backends that evict them leave them
//     dirty in the kernel's cache; the kernel then writes them back in one
//     go after the burst, and every commit's WAL flush queues behind it
//     (the after-burst stall, docs/performance.md). Asking the kernel to
//     write back every 256 kB a backend writes keeps that queue short.
//   - jit: Quita's statements are short lookups and writes, where
//     compiling a query costs more than running it; the planner decides
//     by its cost estimate, which on a table not yet analysed can run far
//     above the work. A profile of the create benchmark caught one read
//     (a sort over an index scan) being compiled.
var sessionDefaults = map[string]string{
	"backend_flush_after": DefaultBackendFlushAfter,
	"jit":                 "off",
}

// pgConfig is the pool configuration of every Postgres connection Quita
// opens, the primary's and a read replica's alike.
func pgConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors redact the password.
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	// bun interpolates every argument into the SQL text, so pgx never has a
	// parameter to bind. Its default mode would prepare (and cache) each
	// distinct statement text — an extra round trip per query and a cache
	// that only churns. The simple protocol sends the text once.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// bun writes string values into that text doubling quotes only, which
	// is safe only while a backslash is an ordinary character in a string
	// literal. Ask for that in the startup packet, which outranks a
	// database's or role's default (ALTER DATABASE … SET
	// standard_conforming_strings = off would otherwise let a value with
	// \' end its literal early on every interpolated write).
	cfg.ConnConfig.RuntimeParams["standard_conforming_strings"] = "on"
	for name, value := range sessionDefaults {
		if !hasParam(dsn, name) {
			cfg.ConnConfig.RuntimeParams[name] = value
		}
	}
	if !hasParam(dsn, "pool_max_conns") {
		// A create is a few round trips plus a commit flush: connections
		// spend most of their time waiting, so allow more than pgx's
		// default of max(4, GOMAXPROCS).
		cfg.MaxConns = max(cfg.MaxConns, 16)
	}
	// A connection whose backend was terminated while it sat idle is
	// dropped before it is handed out (conncheck.go), in pgx's pool and in
	// database/sql's.
	cfg.PrepareConn = func(_ context.Context, c *pgx.Conn) (bool, error) {
		return idleConnAlive(c.PgConn().Conn()), nil
	}
	// pgx would also ping a connection idle for over a second before
	// handing it out: a round trip per query of a quiet process. The peek
	// above finds a terminated backend without one, with or without TLS,
	// so ping only what it cannot inspect (socketOf).
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		_, peekable := socketOf(p.Conn.PgConn().Conn())
		return !peekable && p.IdleDuration > time.Second
	}
	return cfg, nil
}

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgConfig(dsn)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	charges, err := newPGCharges(ctx, cfg, pgdialect.New())
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	// OpenDBFromPool's setting: every database/sql connection is a pool
	// acquire, released to the pool when done.
	primary := acquireWithin{stdlib.GetPoolConnector(pool, stdlib.OptionResetSession(resetSession)), poolAcquireTimeout}
	sqldb := sql.OpenDB(guardedConnector{primary})
	sqldb.SetMaxIdleConns(0)
	sig := newSignals()
	sig.startPostgres(pool, cfg.ConnConfig.Copy())
	db := &DB{
		bun:       bun.NewDB(sqldb, pgdialect.New()),
		dialect:   DialectPostgres,
		closePool: func() { sig.close(); charges.close(); pool.Close() },
		poolSize:  int(cfg.MaxConns),
		signals:   sig,
		pool:      pool,
		charges:   charges,
		primary:   primary,
	}
	db.payouts = newGroup(db.insertPayouts, db.insertPayout)
	db.refunds = db.newRefundGroup()
	return db, nil
}

// poolAcquireTimeout bounds the wait for a pooled connection: past it the
// pool is saturated (the HTTP admission limit should keep it from being),
// and the caller gets ports.ErrStoreUnavailable — a 503 with Retry-After
// on the API — rather than waiting for the server's 30 s write timeout.
// It is long enough for legitimate queues: creates of one payer serialize
// on the velocity guard's advisory lock while holding their connection.
const poolAcquireTimeout = 10 * time.Second

// acquireWithin is a pool connector whose acquire gives up after d.
type acquireWithin struct {
	driver.Connector
	d time.Duration
}

func (c acquireWithin) Connect(ctx context.Context) (driver.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, c.d)
	defer cancel()
	conn, err := c.Connector.Connect(actx)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: no database connection free within %s", ports.ErrStoreUnavailable, c.d)
	}
	return conn, err
}

// PoolSize is the most database connections the store opens at once (1
// on SQLite).
func (db *DB) PoolSize() int { return db.poolSize }

// CreateFlights is what the create batches on Postgres did so far (the
// one flight every create of this process waits on, creates_postgres.go);
// zero on SQLite, which writes each create in its own transaction.
func (db *DB) CreateFlights() ports.FlightStats { return db.charges.flights() }

func hasParam(dsn, name string) bool {
	u, err := url.Parse(dsn)
	return err == nil && u.Query().Has(name)
}

func openSQLite(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: sqlite: empty path (use sqlite:<path> or sqlite::memory:)")
	}
	memory := path == ":memory:"
	sqldb := sql.OpenDB(guardedConnector{newSQLiteConnector(path, memory)})
	// One connection: SQLite has one writer anyway, and with a single
	// connection transactions queue in database/sql instead of failing with
	// SQLITE_BUSY. It also keeps a :memory: database alive (each connection
	// would otherwise get its own), so it must never be closed as idle.
	sqldb.SetMaxOpenConns(1)
	sqldb.SetMaxIdleConns(1)
	sqldb.SetConnMaxLifetime(0)
	sqldb.SetConnMaxIdleTime(0)
	db := &DB{
		bun:       bun.NewDB(sqldb, sqlitedialect.New()),
		dialect:   DialectSQLite,
		closePool: func() {},
		poolSize:  1,
		signals:   newSignals(),
	}
	db.charges = sqlCharges{bun: db.bun}
	db.refunds = db.newRefundGroup()
	return db, nil
}

// Close closes the database. Queries in flight fail.
func (db *DB) Close() error {
	err := db.bun.Close()
	db.closePool()
	if db.replica != nil {
		db.replica.close()
	}
	return err
}

// Ping checks that the database answers, for readiness probes.
func (db *DB) Ping(ctx context.Context) error {
	return db.bun.PingContext(ctx)
}

// Dialect returns DialectPostgres or DialectSQLite.
func (db *DB) Dialect() string { return db.dialect }

// Bun returns the underlying bun handle, for adapters that share the
// database (and its transactions).
func (db *DB) Bun() *bun.DB { return db.bun }

// postgres reports whether idb talks to PostgreSQL.
func postgres(idb bun.IDB) bool {
	return idb.Dialect().Name() == dialect.PG
}
