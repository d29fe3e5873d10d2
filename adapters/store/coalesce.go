package store

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

// newGroup is a group commit of the store's (internal/groupcommit, whose
// package doc states the failure rule): one flush in flight, at most
// coalesceMaxBatch calls in it, each flush bounded by coalesceTimeout,
// and no call run again alone after a batch found no connection.
func newGroup[T, R any](batch func(context.Context, []T, []groupcommit.Result[R]) error, single func(context.Context, T) (R, error)) *groupcommit.Group[T, R] {
	return groupcommit.New(groupcommit.Config[T, R]{Batch: batch, Single: single, MaxFlights: coalesceFlights,
		MaxBatch: coalesceMaxBatch, Timeout: coalesceTimeout, Final: storeUnavailable})
}

// storeUnavailable reports a batch error that no call would escape alone.
func storeUnavailable(err error) bool { return errors.Is(err, ports.ErrStoreUnavailable) }

// flightStats is a group's stats as the port reports them.
func flightStats(s groupcommit.Stats) ports.FlightStats {
	return ports.FlightStats{Batches: s.Flushes, Creates: s.Items, Busy: s.Busy}
}

// coalesceFlights and coalesceMaxBatch size the store's coalescers: one
// flush in flight per kind of call, at most 64 calls in it (a batch of 64
// creates is a few hundred KB of WAL; its largest statement, 32 charge
// rows of ~50 columns, binds ~1,600 parameters of Postgres's 65,535).
const (
	coalesceFlights  = 1
	coalesceMaxBatch = 64
)

// retryLostConn runs a hot-path write and, when the connection it used
// turned out to be gone — its backend terminated while it sat idle, the
// farewell not yet on the socket when the pool looked (conncheck.go) —
// runs it once more on another. Only for writes that are idempotent as a
// whole: a create batch (a batch that did commit meets its own
// idempotency records the second time and answers as a retry) and the
// replay check with its intent (ON CONFLICT DO NOTHING) — and for reads.
func retryLostConn(run func() error) error {
	err := run()
	if connLost(err) {
		err = run()
	}
	return err
}

// connLost reports an error of a connection that died under a statement,
// not of one that could not be had (the pool's wait, a deadline): another
// connection is then worth one try.
func connLost(err error) bool {
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02"
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "conn closed")
}

// coalesceTimeout bounds one flush. A flush outlives the requests it
// serves (their contexts' cancellation does not stop it): a caller that
// gave up must not leave the others half done.
const coalesceTimeout = 30 * time.Second
