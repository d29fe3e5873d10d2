// Package groupcommit runs concurrent calls of one kind as few
// transactions: group commit, done by the process. Quita's store uses it
// for charge creates, the replay checks of live Pix creates, payout
// creates and refund creates.
//
// A call that finds a flight free runs at once, alone or with whatever has
// queued, so a quiet process adds no wait. While Config.MaxFlights flushes
// are in flight new calls queue, and the next flush takes them all (up to
// Config.MaxBatch) as one batch: one transaction, one commit for many
// callers. The busier the process, the larger the batches. No goroutine is
// left running once the queue is empty.
//
// # The failure rule
//
// A batch runs as one transaction (Config.Batch). When it succeeds, each
// item gets the result the batch gave it — which may be an error of that
// item alone (a refund of a charge that is not refundable), the rest being
// written. When the batch fails as a whole, nothing tells which item was
// at fault, so every item of it is run again alone, once (Config.Single),
// and gets its own result: a caller's error (a duplicate key, say) never
// becomes another's, and every call gets the outcome it would have had
// alone. A batch that committed but whose answer was lost is run alone
// too; the writes this package serves are idempotent by key, so each then
// meets its own committed rows and answers as a retry does.
//
// Two failures are not retried alone, because no lone run could fare
// better: the flush ran out of time (Config.Timeout), or Config.Final
// reports the error as one that holds for every call (no database
// connection to be had). Every item of the batch gets that error.
//
// A panic in Batch or Single answers every item of its flush with an
// error, never with success — some of them may have been written, and a
// retry with the same key replays those — and the group goes on serving.
package groupcommit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one item's outcome of a batch.
type Result[R any] struct {
	Value R
	Err   error
}

// Config is what a Group runs and how much at once.
type Config[T, R any] struct {
	// Batch runs items as one transaction and sets results[i] to the
	// outcome of items[i] (results come zeroed: a zero Result is success
	// with R's zero value). A non-nil error is the failure of the batch as
	// a whole; results are then ignored. Batch must not keep items or
	// results once it returns: the group reuses them.
	Batch func(ctx context.Context, items []T, results []Result[R]) error
	// Single runs one item alone, in its own transaction.
	Single func(ctx context.Context, item T) (R, error)
	// MaxFlights is how many flushes may run at once; MaxBatch the most
	// items one flush carries. Both are at least 1.
	MaxFlights, MaxBatch int
	// Timeout bounds one flush, Batch and the lone runs after it failed
	// together; 0 means no bound. A flush outlives the calls it serves
	// (their contexts' cancellation does not stop it): a caller that gave
	// up must not leave the others half done.
	Timeout time.Duration
	// Final reports a batch error after which running each item alone is
	// pointless (the failure rule); nil: none is.
	Final func(error) bool
	// Key, when set, keeps items of one key out of one batch: the second
	// waits for a later flush (a transaction may name a row once).
	Key func(T) string
}

// Stats is what a group's flushes did so far: how many ran, the items
// they carried and the time they took in all.
type Stats struct {
	Flushes, Items uint64
	Busy           time.Duration
}

// Group runs calls of one kind in batches. It is safe for concurrent use.
type Group[T, R any] struct {
	cfg Config[T, R]

	mu      sync.Mutex
	queue   []*call[T, R]
	flights int
	// spare holds the buffers of finished flushes, for the next ones.
	spare []*flush[T, R]

	flushes, items, busyNanos atomic.Uint64
}

type call[T, R any] struct {
	ctx  context.Context
	item T
	res  Result[R]
	done chan struct{}
}

// flush is the buffers of one batch: its calls, their items and results.
type flush[T, R any] struct {
	calls   []*call[T, R]
	items   []T
	results []Result[R]
}

// New returns a group that runs calls as cfg says.
func New[T, R any](cfg Config[T, R]) *Group[T, R] {
	cfg.MaxFlights, cfg.MaxBatch = max(cfg.MaxFlights, 1), max(cfg.MaxBatch, 1)
	return &Group[T, R]{cfg: cfg}
}

// Stats reports what g's flushes did so far.
func (g *Group[T, R]) Stats() Stats {
	return Stats{Flushes: g.flushes.Load(), Items: g.items.Load(), Busy: time.Duration(g.busyNanos.Load())}
}

// Queued is how many calls wait for a flight.
func (g *Group[T, R]) Queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// Do runs item, in a batch with others when some are waiting, and returns
// its own outcome. It waits for the flush that carries item even when ctx
// ends first: the answer is then the true one, not a guess. An item whose
// ctx ends while it queues is answered with ctx's error and never run.
func (g *Group[T, R]) Do(ctx context.Context, item T) (R, error) {
	c := &call[T, R]{ctx: ctx, item: item, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := g.flights < g.cfg.MaxFlights
	if lead {
		g.flights++
	}
	g.mu.Unlock()
	if lead {
		// This call flushes what has queued, itself included, then hands
		// its flight on while there is more, so its own answer never waits
		// behind other callers' batches.
		if f := g.take(nil); f != nil {
			g.run(f)
			g.handOff(f)
		}
	}
	<-c.done
	return c.res.Value, c.res.Err
}

// take returns done's buffers (when not nil) and removes the next batch
// from the queue, or releases the caller's flight and returns nil when
// nothing is left to run. Calls whose context ended while they queued are
// answered at once.
func (g *Group[T, R]) take(done *flush[T, R]) *flush[T, R] {
	g.mu.Lock()
	defer g.mu.Unlock()
	if done != nil {
		g.spare = append(g.spare, done)
	}
	var f *flush[T, R]
	if n := len(g.spare); n > 0 {
		f, g.spare = g.spare[n-1], g.spare[:n-1]
	} else {
		f = &flush[T, R]{}
	}
	queued := g.queue
	rest := queued[:0] // what stays, in arrival order
	for i, c := range queued {
		if len(f.calls) == g.cfg.MaxBatch && g.cfg.Key == nil {
			rest = append(rest, queued[i:]...)
			break
		}
		switch {
		case len(f.calls) == g.cfg.MaxBatch, g.cfg.Key != nil && g.taken(f, c):
			rest = append(rest, c)
		case c.ctx.Err() != nil:
			c.res.Err = c.ctx.Err()
			close(c.done)
		default:
			f.calls = append(f.calls, c)
		}
	}
	clear(queued[len(rest):])
	g.queue = rest
	if len(g.queue) == 0 {
		g.queue = nil // let the backing array go
	}
	if len(f.calls) == 0 {
		g.spare = append(g.spare, f)
		g.flights--
		return nil
	}
	return f
}

// taken reports whether f already carries a call of c's key.
func (g *Group[T, R]) taken(f *flush[T, R], c *call[T, R]) bool {
	k := g.cfg.Key(c.item)
	for _, o := range f.calls {
		if g.cfg.Key(o.item) == k {
			return true
		}
	}
	return false
}

// handOff keeps the flight of a call that just ran its own batch busy
// while calls are queued, draining them in a goroutine of its own, and
// frees it otherwise.
func (g *Group[T, R]) handOff(done *flush[T, R]) {
	g.mu.Lock()
	g.spare = append(g.spare, done)
	if len(g.queue) == 0 {
		g.flights--
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	go g.drain()
}

// drain runs batches until the queue is empty, then frees its flight.
func (g *Group[T, R]) drain() {
	for f := g.take(nil); f != nil; f = g.take(f) {
		g.run(f)
	}
}

// run runs one batch by the failure rule and answers its calls.
func (g *Group[T, R]) run(f *flush[T, R]) {
	ctx := context.WithoutCancel(f.calls[0].ctx)
	if g.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.cfg.Timeout)
		defer cancel()
	}
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("groupcommit: a batched call panicked: %v", r)
			for _, c := range f.calls {
				c.res = Result[R]{Err: err}
			}
		}
		g.busyNanos.Add(uint64(time.Since(start)))
		g.flushes.Add(1)
		g.items.Add(uint64(len(f.calls)))
		for _, c := range f.calls {
			close(c.done)
		}
		clear(f.calls)
		clear(f.items)
		clear(f.results)
		f.calls, f.items, f.results = f.calls[:0], f.items[:0], f.results[:0]
	}()
	if len(f.calls) == 1 {
		c := f.calls[0]
		c.res.Value, c.res.Err = g.cfg.Single(ctx, c.item)
		return
	}
	for _, c := range f.calls {
		f.items = append(f.items, c.item)
		f.results = append(f.results, Result[R]{})
	}
	err := g.cfg.Batch(ctx, f.items, f.results)
	if err == nil {
		for i, c := range f.calls {
			c.res = f.results[i]
		}
		return
	}
	if ctx.Err() != nil || g.cfg.Final != nil && g.cfg.Final(err) {
		for _, c := range f.calls {
			c.res.Err = err
		}
		return
	}
	for _, c := range f.calls {
		c.res.Value, c.res.Err = g.cfg.Single(ctx, c.item)
	}
}
