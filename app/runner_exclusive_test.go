package app_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testenv"
)

// TestExclusiveWorkerRunsInOneProcess: two runners sharing the store's
// worker leases (two processes) run an exclusive worker one at a time —
// every tick in the holder — while a plain worker runs in both; when the
// holder stops, it hands the lease back and the other takes the worker
// over at its next tick.
func TestExclusiveWorkerRunsInOneProcess(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, err := store.Open(ctx, dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var sweeps, plain [2]atomic.Int64
			start := func(i int) (stop func()) {
				r := app.NewWorkerRunner(slog.New(slog.DiscardHandler),
					app.Worker{Name: "sweep", Interval: 5 * time.Millisecond, Exclusive: true, Tick: func(context.Context) (int, error) {
						sweeps[i].Add(1)
						return 0, nil
					}},
					app.Worker{Name: "plain", Interval: 5 * time.Millisecond, Tick: func(context.Context) (int, error) {
						plain[i].Add(1)
						return 0, nil
					}})
				r.ShareExclusive(db, "process-"+string(rune('a'+i)), app.SystemClock{})
				rctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() { r.Run(rctx); close(done) }()
				return func() { cancel(); <-done }
			}
			stopA := start(0)
			waitFor(t, "the first process sweeps", func() bool { return sweeps[0].Load() > 0 })
			stopB := start(1)
			defer stopB()
			waitFor(t, "the second process runs its plain worker", func() bool { return plain[1].Load() >= 20 })
			if n := sweeps[1].Load(); n != 0 {
				t.Fatalf("the second process swept %d times while the first held the lease (%d)", n, sweeps[0].Load())
			}
			stopA()
			handed := time.Now()
			waitFor(t, "the second process takes the sweep over", func() bool { return sweeps[1].Load() > 0 })
			// Well within the lease's TTL (15 s): the lease was handed back.
			if d := time.Since(handed); d > 5*time.Second {
				t.Errorf("the other process took over after %s", d)
			}
		})
	}
}
