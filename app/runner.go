package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
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
}

// WorkerRunner owns the scheduling of a binary's periodic workers.
type WorkerRunner struct {
	log     *slog.Logger
	workers []Worker
}

// NewWorkerRunner schedules workers; Run starts them.
func NewWorkerRunner(log *slog.Logger, workers ...Worker) *WorkerRunner {
	return &WorkerRunner{log: log, workers: workers}
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
		n, err := w.Tick(ctx)
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
