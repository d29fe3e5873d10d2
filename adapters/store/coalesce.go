package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quitapix/quita/ports"
)

// A coalescer runs concurrent calls of one kind in few round trips — group
// commit, done by the process (issue 17). A call that finds a flight free
// flushes at once, alone or with whatever has queued, so a quiet process
// adds no wait; while maxFlights flushes are in flight, new calls queue,
// and the next flush takes them all (up to maxBatch) as one batch: one
// round trip, one transaction, one WAL flush for many callers. The busier
// the process, the larger the batches, and the cheaper each call.
//
// A batch is all or nothing (one transaction). When it fails, each of its
// calls is run again alone, so one caller's error (a duplicate key, say)
// never becomes another's: every call gets exactly the outcome it would
// have had alone. A batch that committed but whose answer was lost (a
// connection cut after the commit) makes the calls run again alone, which
// then meet their own committed rows and answer as for a retry
// (ErrIdempotencyKeyExists for a create).
type coalescer[T any] struct {
	// batch runs items as one transaction in one round trip and stores
	// each item's own result in it; single runs one item alone.
	batch  func(ctx context.Context, items []T) error
	single func(ctx context.Context, item T) error

	maxFlights, maxBatch int

	mu      sync.Mutex
	queue   []*coalesced[T]
	flights int

	// What the flushes did, for the operator (ports.FlightStats).
	flushes, calls, busyNanos atomic.Uint64
}

// stats is what c's flushes did so far: how many ran, the calls they
// carried and the time they took in all.
func (c *coalescer[T]) stats() ports.FlightStats {
	return ports.FlightStats{Batches: c.flushes.Load(), Creates: c.calls.Load(), Busy: time.Duration(c.busyNanos.Load())}
}

type coalesced[T any] struct {
	ctx  context.Context
	item T
	err  error
	done chan struct{}
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

func newCoalescer[T any](maxFlights, maxBatch int, batch func(context.Context, []T) error, single func(context.Context, T) error) *coalescer[T] {
	return &coalescer[T]{batch: batch, single: single, maxFlights: max(maxFlights, 1), maxBatch: max(maxBatch, 1)}
}

// do runs item, in a batch with others when some are waiting, and returns
// its own outcome. It waits for the flush that carries item even when ctx
// ends first: the answer is then the true one, not a guess.
func (c *coalescer[T]) do(ctx context.Context, item T) error {
	p := &coalesced[T]{ctx: ctx, item: item, done: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	lead := c.flights < c.maxFlights
	if lead {
		c.flights++
	}
	c.mu.Unlock()
	if lead {
		// This call flushes what has queued, itself included, then hands
		// its flight to a goroutine while there is more, so its own answer
		// never waits behind other callers' batches.
		if b := c.take(); b != nil {
			c.flush(b)
			go c.drain()
		}
	}
	<-p.done
	return p.err
}

// take removes the next batch from the queue, or releases the caller's
// flight and returns nil when the queue is empty. Calls whose context
// ended while they queued are answered at once and not run.
func (c *coalescer[T]) take() []*coalesced[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b []*coalesced[T]
	for len(c.queue) > 0 && len(b) < c.maxBatch {
		p := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if err := p.ctx.Err(); err != nil {
			p.err = err
			close(p.done)
			continue
		}
		b = append(b, p)
	}
	if len(c.queue) == 0 {
		c.queue = nil // let the backing array go
	}
	if len(b) == 0 {
		c.flights--
		return nil
	}
	return b
}

// drain flushes batches until the queue is empty, then frees its flight.
func (c *coalescer[T]) drain() {
	for b := c.take(); b != nil; b = c.take() {
		c.flush(b)
	}
}

func (c *coalescer[T]) flush(b []*coalesced[T]) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b[0].ctx), coalesceTimeout)
	defer cancel()
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			// Never answer success for a write that may not have happened,
			// and keep the flight for the next batch. A call that had
			// already committed (alone, after a failed batch) is told it
			// failed: its retry with the same key replays it.
			err := fmt.Errorf("store: a batched write panicked: %v", r)
			for _, p := range b {
				p.err = err
			}
		}
		c.busyNanos.Add(uint64(time.Since(start)))
		c.flushes.Add(1)
		c.calls.Add(uint64(len(b)))
		for _, p := range b {
			close(p.done)
		}
	}()
	if len(b) == 1 {
		b[0].err = c.single(ctx, b[0].item)
		return
	}
	items := make([]T, len(b))
	for i, p := range b {
		items[i] = p.item
	}
	err := c.batch(ctx, items)
	if err == nil {
		return
	}
	if errors.Is(err, ports.ErrStoreUnavailable) || ctx.Err() != nil {
		// No connection, or out of time: alone they would fare no better.
		for _, p := range b {
			p.err = err
		}
		return
	}
	for _, p := range b {
		p.err = c.single(ctx, p.item)
	}
}
