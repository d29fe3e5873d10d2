package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testkit"
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

// An idle worker with an IdleInterval polls less and less often (the wait
// doubles up to IdleInterval); a wake-up brings it back to Interval at
// once, and so does a tick that found work.
func TestWorkerRunnerBacksOffWhenIdle(t *testing.T) {
	t.Parallel()
	wake := make(chan struct{}, 1)
	var (
		mu    sync.Mutex
		times []time.Time
		work  int // ticks that will report work
	)
	r := app.NewWorkerRunner(slog.New(slog.DiscardHandler), app.Worker{Name: "idle", Interval: 20 * time.Millisecond,
		IdleInterval: 160 * time.Millisecond, Wake: wake,
		Tick: func(context.Context) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			times = append(times, time.Now())
			if work > 0 {
				work--
				return 1, nil
			}
			return 0, nil
		}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	ticks := func() int { mu.Lock(); defer mu.Unlock(); return len(times) }

	time.Sleep(time.Second)
	idle := ticks()
	// Without backoff a second at 20 ms is ~50 ticks; with it: 20, 40, 80,
	// 160, 160, ... ms, about 9.
	if idle < 4 || idle > 15 {
		t.Fatalf("%d ticks in an idle second, want about 9 (backing off to 160 ms)", idle)
	}
	mu.Lock()
	work = 3
	mu.Unlock()
	wake <- struct{}{}
	time.Sleep(300 * time.Millisecond)
	// The wake-up ticks at once, the three ticks with work keep the 20 ms
	// pace, then it backs off again: far more than the 2 idle ticks 300 ms
	// would hold at 160 ms.
	if got := ticks() - idle; got < 5 {
		t.Fatalf("%d ticks in the 300 ms after a wake-up and work, want at least 5", got)
	}
}

// A worker with MinGap, woken far more often than that (the stats fold is
// woken by every commit), ticks at most once per MinGap.
func TestWorkerRunnerSpacesWokenTicks(t *testing.T) {
	t.Parallel()
	wake := make(chan struct{}, 1)
	var ticks atomic.Int64
	r := app.NewWorkerRunner(slog.New(slog.DiscardHandler), app.Worker{Name: "spaced", Interval: time.Millisecond,
		MinGap: 100 * time.Millisecond, Wake: wake,
		Tick: func(context.Context) (int, error) { ticks.Add(1); return 1, nil }})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	start := time.Now()
	for time.Since(start) < 500*time.Millisecond {
		select {
		case wake <- struct{}{}:
		default:
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	// Without the gap, ~500 ticks (1 ms interval, woken every ms); with
	// it at most one per 100 ms of the run (plus the first).
	elapsed := time.Since(start)
	if n, most := ticks.Load(), int64(elapsed/(100*time.Millisecond))+1; n < 2 || n > most {
		t.Fatalf("%d ticks in %v, want between 2 and %d", n, elapsed, most)
	}
}

// A worker whose ticks keep failing (its database is gone) logs the first
// failure at once and not each one after it; when a tick succeeds again it
// says how many failed, and a new run of failures is logged at once again.
func TestWorkerRunnerLogsARunOfFailuresOnce(t *testing.T) {
	t.Parallel()
	logs := &testkit.Buffer{}
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	r := app.NewWorkerRunner(slog.New(slog.NewJSONHandler(logs, nil)),
		app.Worker{Name: "flaky", Interval: time.Millisecond, Tick: func(context.Context) (int, error) {
			switch n := calls.Add(1); {
			case n <= 30, n == 32:
				return 0, errors.New("database gone")
			default:
				return 0, nil
			}
		}})
	go func() { r.Run(ctx); close(done) }()
	for deadline := time.Now().Add(10 * time.Second); calls.Load() < 40; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d ticks in 10 s", calls.Load())
		}
	}
	cancel()
	<-done
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	var got []string
	for _, m := range lines {
		got = append(got, fmt.Sprintf("%v %v", m["msg"], m["failed_ticks"]))
	}
	want := []string{"worker tick failed 1", "worker recovered 30", "worker tick failed 1", "worker recovered 1"}
	if !slices.Equal(got, want) {
		t.Fatalf("log lines %q, want %q", got, want)
	}
}
