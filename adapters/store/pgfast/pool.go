// Package pgfast runs a Postgres store's most frequent statements over a
// pgx pool of their own: a create's writes and the reads every create
// makes. Its statements bind their parameters over the extended protocol
// and are prepared once per connection by name; nothing is interpolated
// into SQL text, so no value depends on the server's string escaping.
//
// The package knows no table of the store: it plans statements from the
// store's bun row structs (Tables), encodes each row's values in the
// caller's goroutine (InsertPlan.Encode), and sends a batch of multi-row
// INSERTs and prepared statements in one round trip, with one Sync, as one
// implicit transaction (Batch). What a create writes, and in which order,
// is the store's (adapters/store/creates_postgres.go).
package pgfast

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quitapix/quita/ports"
)

// Pool is the pool the fast statements run on. Its connections cache
// prepared statements, which the store's main pool (simple protocol,
// bun's interpolated text) cannot; being apart, it also keeps creates
// from queueing behind the workers' queries.
type Pool struct {
	pool   *pgxpool.Pool
	within time.Duration
}

// Open opens a pool configured as cfg (which it does not change), with
// half its connections (at least 4), each caching its prepared
// statements. An acquire that waits longer than within fails with
// ports.ErrStoreUnavailable.
func Open(ctx context.Context, cfg *pgxpool.Config, within time.Duration) (*Pool, error) {
	c := cfg.Copy()
	c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	c.MaxConns = max(cfg.MaxConns/2, 4)
	pool, err := pgxpool.NewWithConfig(ctx, c)
	if err != nil {
		return nil, err
	}
	return &Pool{pool: pool, within: within}, nil
}

// Close closes the pool's connections.
func (p *Pool) Close() { p.pool.Close() }

// Stat is the pool's pgx statistics.
func (p *Pool) Stat() *pgxpool.Stat { return p.pool.Stat() }

// Acquire takes a connection of the pool (AcquireWithin).
func (p *Pool) Acquire(ctx context.Context) (*pgxpool.Conn, error) {
	return AcquireWithin(ctx, p.pool, p.within)
}

// Run runs fn on a connection of the pool and, when that connection
// turned out to be gone — its backend terminated while it sat idle, the
// farewell not yet on the socket when the pool looked — runs it once more
// on another. Only for what is idempotent as a whole: a read, a batch of
// creates (a batch that did commit meets its own idempotency records the
// second time and answers as a retry), an insert ON CONFLICT DO NOTHING.
func (p *Pool) Run(ctx context.Context, fn func(*pgx.Conn) error) error {
	return RetryLostConn(func() error {
		conn, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		return fn(conn.Conn())
	})
}

// AcquireWithin takes a connection of pool, waiting at most d: past it
// the pool is saturated, and the caller gets ports.ErrStoreUnavailable.
func AcquireWithin(ctx context.Context, pool *pgxpool.Pool, d time.Duration) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	conn, err := pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, fmt.Errorf("%w: no database connection free within %s", ports.ErrStoreUnavailable, d)
		}
		return nil, err
	}
	return conn, nil
}

// RetryLostConn runs run once more when it failed on a connection that
// died under it (ConnLost). run must be idempotent as a whole (Pool.Run).
func RetryLostConn(run func() error) error {
	err := run()
	if ConnLost(err) {
		err = run()
	}
	return err
}

// ConnLost reports an error of a connection that died under a statement,
// not of one that could not be had (the pool's wait, a deadline): another
// connection is then worth one try.
func ConnLost(err error) bool {
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02"
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "conn closed")
}
