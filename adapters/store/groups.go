package store

import (
	"context"
	"errors"
	"time"

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

// coalesceFlights and coalesceMaxBatch size the store's groups: one flush
// in flight per kind of call, at most 64 calls in it (a batch of 64
// creates is a few hundred KB of WAL; its largest statement, 32 charge
// rows of ~50 columns, binds ~1,600 parameters of Postgres's 65,535). The
// fewer flushes in flight, the more each carries: measured back to back
// (closed loop, 32 clients; docs/performance.md), 1 flight made 1,281 and
// 1,325 creates/s at 0.57–0.62 ms of Postgres CPU per create; 2 flights
// 912 and 1,169 at 0.76–0.89 ms; 4 flights 885 and 1,075 at 0.89–0.99 ms.
const (
	coalesceFlights  = 1
	coalesceMaxBatch = 64
)

// coalesceTimeout bounds one flush. A flush outlives the requests it
// serves (their contexts' cancellation does not stop it): a caller that
// gave up must not leave the others half done.
const coalesceTimeout = 30 * time.Second
