package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Worker is a periodic job: Tick handles at most one batch and reports how
// many items it handled.
type Worker struct {
	Name     string
	Interval time.Duration
	Tick     func(context.Context) (int, error)
	// Wake, when set, starts a tick at once instead of at the next
	// interval (new work committed in this process).
	Wake <-chan struct{}
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
// backlogs drain.
func (r *WorkerRunner) runEvery(ctx context.Context, w Worker) {
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	for {
		n, err := w.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.ErrorContext(ctx, "worker tick failed", "worker", w.Name, "err", err)
		}
		if n >= workerBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.Wake: // a nil channel never fires
		}
	}
}
