package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// Worker is a periodic job: Tick handles one batch (at most workerBatch
// items; the refund worker's, what its lanes find) and reports how many
// items it handled.
type Worker struct {
	Name     string
	Interval time.Duration
	Tick     func(context.Context) (int, error)
	// Wake, when set, starts a tick at once instead of at the next
	// interval (new work committed in this process).
	Wake <-chan struct{}
	// IdleInterval, when longer than Interval, is how far the wait grows
	// (doubling) while ticks find nothing; a tick with work or a wake-up
	// brings it back to Interval. Workers that are woken when work commits
	// need not poll an idle database often.
	IdleInterval time.Duration
	// MinGap, when set, is the shortest time between the starts of two
	// ticks, woken or not: a worker woken by every commit (the stats fold)
	// then runs a few times a second under load, not once per commit.
	MinGap time.Duration
	// Exclusive runs the worker in one process of the deployment at a
	// time (the runner's leases; without them, in every process): a sweep
	// whose every pass reads the same rows, which two processes would
	// both read and race to change.
	Exclusive bool
}

// WorkerLeaseTTL is how long an exclusive worker's lease lasts past each
// tick: three of its slowest waits and at least 15 s, so a holder renews
// well before it runs out and another process takes the worker over
// within that time after the holder dies.
func WorkerLeaseTTL(w Worker) time.Duration {
	return max(3*max(w.Interval, w.IdleInterval), 15*time.Second)
}

// WorkerRunner owns the scheduling of a binary's periodic workers.
type WorkerRunner struct {
	log     *slog.Logger
	workers []Worker
	leases  ports.WorkerLeases
	holder  string
	clock   ports.Clock
}

// NewWorkerRunner schedules workers; Run starts them.
func NewWorkerRunner(log *slog.Logger, workers ...Worker) *WorkerRunner {
	return &WorkerRunner{log: log, workers: workers}
}

// ShareExclusive makes the exclusive workers take leases as holder (a
// name unique to this process), so the processes sharing leases run each
// one at a time. Call it before Run.
func (r *WorkerRunner) ShareExclusive(leases ports.WorkerLeases, holder string, clock ports.Clock) {
	r.leases, r.holder, r.clock = leases, holder, clock
}

// holds reports whether this process may run w's tick now, taking or
// renewing its lease; a failure to ask counts as not holding it.
// heldUntil is when the lease this process last took ends: while more
// than half of it is left nobody else can take it, so it is not renewed
// (one write per half TTL, not one per tick).
func (r *WorkerRunner) holds(ctx context.Context, w Worker, heldUntil *time.Time) (bool, error) {
	if !w.Exclusive || r.leases == nil {
		return true, nil
	}
	now, ttl := r.clock.Now(), WorkerLeaseTTL(w)
	if now.Before(heldUntil.Add(-ttl / 2)) {
		return true, nil
	}
	ok, err := r.leases.HoldWorkerLease(ctx, w.Name, r.holder, now, ttl)
	*heldUntil = time.Time{}
	if ok && err == nil {
		*heldUntil = now.Add(ttl)
	}
	return ok, err
}

// Run runs every worker until ctx ends and returns once all have stopped.
func (r *WorkerRunner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Go(func() { r.runEvery(ctx, w) })
	}
	wg.Wait()
}

// runEvery calls w.Tick every w.Interval until ctx ends, logging failures.
// A tick that handled a full batch is followed at once by another, so
// backlogs drain; an idle one lengthens the wait up to w.IdleInterval.
func (r *WorkerRunner) runEvery(ctx context.Context, w Worker) {
	failures := tickFailures{log: r.log, worker: w.Name}
	defer r.release(w)
	var heldUntil time.Time // the lease of an exclusive worker
	wait := w.Interval
	t := time.NewTimer(wait)
	defer t.Stop()
	var last time.Time
	for {
		if gap := w.MinGap - time.Since(last); gap > 0 {
			t.Reset(gap)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		last = time.Now()
		n, err := 0, error(nil)
		switch ok, lerr := r.holds(ctx, w, &heldUntil); {
		case lerr != nil:
			err = lerr
		case ok:
			n, err = w.Tick(ctx)
		}
		if ctx.Err() == nil {
			failures.note(ctx, err)
		}
		if n >= workerBatch {
			continue
		}
		switch {
		case n > 0 || err != nil:
			wait = w.Interval
		case w.IdleInterval > wait:
			wait = min(2*wait, w.IdleInterval)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.Wake: // a nil channel never fires
			wait = w.Interval
		}
	}
}

// release hands w's lease back when this process stops, so another takes
// the worker over at its next tick instead of after the lease's TTL.
func (r *WorkerRunner) release(w Worker) {
	if !w.Exclusive || r.leases == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = r.leases.ReleaseWorkerLease(ctx, w.Name, r.holder) // else it runs out
}

// tickFailureLogEvery is how often a worker that keeps failing says so
// again after its first failure.
const tickFailureLogEvery = time.Minute

// tickFailures logs one worker's failed ticks without flooding the log: a
// database that is gone fails every worker's every tick, about ten a
// second for one quitad. The first failure of a run of them is logged at
// once, then at most one line each tickFailureLogEvery with how many
// ticks have failed since the run began, and one line when a tick
// succeeds again.
type tickFailures struct {
	log    *slog.Logger
	worker string
	failed int       // ticks failed in a row
	said   time.Time // when the last line about them was written
}

// note records a tick's outcome.
func (f *tickFailures) note(ctx context.Context, err error) {
	if err == nil {
		if f.failed > 0 {
			f.log.InfoContext(ctx, "worker recovered", "worker", f.worker, "failed_ticks", f.failed)
			f.failed = 0
		}
		return
	}
	f.failed++
	if f.failed == 1 || time.Since(f.said) >= tickFailureLogEvery {
		f.log.ErrorContext(ctx, "worker tick failed", "worker", f.worker, "failed_ticks", f.failed, "err", err)
		f.said = time.Now()
	}
}
