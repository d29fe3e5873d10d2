package app_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
)

// A full batch is followed at once by another tick; a short one waits for
// the interval; Run returns once ctx ends, and a failing tick does not stop
// its worker.
func TestWorkerRunnerDrainsBacklogsAndStops(t *testing.T) {
	t.Parallel()
	var busy, idle atomic.Int64
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	r := app.NewWorkerRunner(slog.New(slog.DiscardHandler),
		app.Worker{Name: "backlog", Interval: time.Hour, Tick: func(context.Context) (int, error) {
			if busy.Add(1) < 5 {
				return 200, nil // a full batch: go again without waiting
			}
			return 0, errors.New("tick failed")
		}},
		app.Worker{Name: "idle", Interval: time.Hour, Tick: func(context.Context) (int, error) {
			idle.Add(1)
			return 0, nil
		}},
	)
	go func() { r.Run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for busy.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if got := busy.Load(); got != 5 {
		t.Fatalf("backlog worker ticked %d times, want 5 (4 full batches, then wait)", got)
	}
	if got := idle.Load(); got != 1 {
		t.Fatalf("idle worker ticked %d times before its interval, want 1", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
}

// A worker with a Wake channel ticks as soon as it is signalled, not at its
// next interval (the refund worker is woken when a refund commits).
func TestWorkerRunnerWakesOnSignal(t *testing.T) {
	t.Parallel()
	wake := make(chan struct{}, 1)
	ticks := make(chan struct{}, 10)
	r := app.NewWorkerRunner(slog.New(slog.DiscardHandler), app.Worker{Name: "woken", Interval: time.Hour, Wake: wake,
		Tick: func(context.Context) (int, error) { ticks <- struct{}{}; return 0, nil }})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-ticks // the first tick runs at start
	wake <- struct{}{}
	select {
	case <-ticks:
	case <-time.After(10 * time.Second): // the interval is an hour: only the wake-up can tick
		t.Fatal("the wake-up did not start a tick")
	}
}
