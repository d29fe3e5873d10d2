package main

// Overload, idle and memory figures.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quitapix/quita/cmd/wiring"
)

// recoveryWindow is how long the normal rate runs after the overload; the
// figure is the p99 of what was sent from 5 s after the overload stopped.
const (
	recoveryWindow = 10 * time.Second
	recoveredAfter = 5 * time.Second
)

// overloadPhase offers twice the measured capacity for spec.Duration, then
// the normal rate again, and reports the goodput, how quickly the excess
// was refused, anything that failed otherwise, and how soon latency came
// back. While it runs it samples where the database's sessions wait and
// counts the pool's waits, to say where the time goes.
func overloadPhase(ctx context.Context, a *wiring.App, dsn string, spec loadSpec, rate2x, normal int, profile string, coldP99 float64) ([]row, error) {
	capacity := float64(rate2x) / 2
	waits, stop, err := sampleWaits(ctx, dsn)
	if err != nil {
		return nil, err
	}
	before := a.DB.PoolStats()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Println("overload: no CPU profile of the phase (a whole-run profile is being written):", err)
		} else {
			defer pprof.StopCPUProfile()
		}
	}
	spec.Rate = rate2x
	over, err := openLoopProc(spec)
	if err != nil {
		stop()
		return nil, err
	}
	after := a.DB.PoolStats()
	samples := stop()
	if profile != "" {
		pprof.StopCPUProfile()
	}
	spec.Rate = normal
	spec.Duration = recoveryWindow
	rec, err := openLoopProc(spec)
	if err != nil {
		return nil, err
	}
	load := loadavg()

	or := summarize(over, 201)
	goodput := float64(or.ok) / durationOf(over)
	fmt.Printf("create, overload at %d/s (2 x %.0f/s): %s; goodput %.0f/s; shed answered in p99 %.1f ms, max %.1f ms\n",
		rate2x, capacity, or, goodput, pct(or.shedLat, 99), pct(or.shedLat, 100))
	acq, waited := after.Acquires-before.Acquires, after.Waited-before.Waited
	avgWait := time.Duration(0)
	if waited > 0 {
		avgWait = (after.WaitTime - before.WaitTime) / time.Duration(waited)
	}
	fmt.Printf("  pool (%d connections): %d acquires, %d waited for a connection (avg %s)\n", after.Size, acq, waited, avgWait.Round(time.Microsecond))
	fmt.Printf("  Postgres sessions of the benchmark database, by wait event (%d samples every 100 ms): %s\n", samples, waits.top(8, samples))
	rr := summarize(window(rec, ms(recoveredAfter), ms(recoveryWindow)), 201)
	early := summarize(window(rec, 0, ms(recoveredAfter)), 201)
	fmt.Printf("create, %d/s right after the overload: first 5 s %s; from 5 s on %s\n", normal, early, rr)

	return []row{
		{target{"overload 2x goodput", goodput, "charges/s", 0.8 * capacity, true}, fmt.Sprintf("0.8 x capacity %.0f/s (closed loop)", capacity), load},
		{target{"overload shed latency max", pct(or.shedLat, 100), "ms", 50, false}, fmt.Sprintf("%d shed with Retry-After", or.shed), load},
		{target{"overload timeouts/errors", float64(or.failed), "requests", 0, false}, fmt.Sprintf("of %d offered", or.offered), load},
		{target{"recovered p99 (5-10 s after)", pct(rr.okLat, 99), "ms", 20, false}, fmt.Sprintf("cold p99 %.1f ms", coldP99), load},
		{target{"recovered errors (5-10 s after)", float64(rr.shed + rr.failed), "requests", 0, false}, fmt.Sprintf("of %d", rr.offered), load},
	}, nil
}

// durationOf is the seconds the shots were scheduled over.
func durationOf(shots []shot) float64 {
	if len(shots) < 2 {
		return 1
	}
	return (shots[len(shots)-1].At - shots[0].At) / 1000
}

// waitCounts counts sampled sessions by "state wait_event_type:wait_event".
type waitCounts map[string]int

func (w waitCounts) top(n, samples int) string {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return w[b] - w[a] })
	var b strings.Builder
	for i, k := range keys {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "%s %.1f; ", k, float64(w[k])/float64(max(samples, 1)))
	}
	return strings.TrimSuffix(b.String(), "; ") + " (average sessions)"
}

// walLSN is the cluster's current WAL position in bytes, or 0 when it
// cannot be read.
func walLSN(ctx context.Context, dsn string) int64 {
	return max(counter(ctx, dsn, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"), 0)
}

// commits is how many transactions the database has committed so far
// (pg_stat_database; backends report at most once a second, so a phase's
// count is good to a second's worth), or -1 when it cannot be read.
func commits(ctx context.Context, dsn string) int64 {
	return counter(ctx, dsn, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
}

// counter is the first of queries that answers one integer, on a
// connection of its own, or -1 when none does.
func counter(ctx context.Context, dsn string, queries ...string) int64 {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return -1
	}
	defer conn.Close(ctx)
	var n int64
	for _, q := range queries {
		if conn.QueryRow(ctx, q).Scan(&n) == nil {
			return n
		}
	}
	return -1
}

// checkpoints is how many checkpoints the cluster has started so far
// (timed and requested), or -1 when it cannot be read. A checkpoint makes
// the next write of every page it flushed log the whole page, so one that
// starts inside a phase can stall commits there: the phases say when one
// did.
func checkpoints(ctx context.Context, dsn string) int64 {
	// pg_stat_checkpointer from Postgres 17 on, pg_stat_bgwriter before.
	return counter(ctx, dsn, "SELECT num_timed + num_requested FROM pg_stat_checkpointer",
		"SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter")
}

// checkpointNote is the line a phase prints when checkpoints started
// during it (from and to are checkpoints' answers before and after).
func checkpointNote(from, to int64) string {
	if from < 0 || to <= from {
		return ""
	}
	return fmt.Sprintf("    checkpoints started during the phase: %d\n", to-from)
}

// sampleWaits polls pg_stat_activity every 100 ms until stop, which
// returns the number of samples taken.
func sampleWaits(ctx context.Context, dsn string) (waitCounts, func() int, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	w := waitCounts{}
	done := make(chan struct{})
	var (
		wg      sync.WaitGroup
		samples int
	)
	wg.Go(func() {
		defer conn.Close(context.WithoutCancel(ctx))
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			rows, err := conn.Query(ctx, `SELECT state || ' ' || coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*)
				FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
				AND backend_type = 'client backend' AND state <> 'idle' GROUP BY 1`)
			if err != nil {
				continue
			}
			for rows.Next() {
				var k string
				var n int
				if rows.Scan(&k, &n) == nil {
					w[k] += n
				}
			}
			rows.Close()
			samples++
		}
	})
	return w, func() int { close(done); wg.Wait(); return samples }, nil
}

// idleQueries counts the transactions the scratch database commits or
// rolls back over d (pg_stat_database; each statement outside a
// transaction is one): the cost of an idle quitad.
func idleQueries(ctx context.Context, adminURL, dsn string, d time.Duration) (float64, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, err
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	count := func() (int64, error) {
		var n int64
		// Statistics reach pg_stat_database within a second; a fresh
		// snapshot each time.
		_, _ = conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()")
		err := conn.QueryRow(ctx, "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1", cfg.Database).Scan(&n)
		return n, err
	}
	// A backend flushes its statistics at most once a second while busy
	// and 10 s after it went idle (PGSTAT_IDLE_INTERVAL): the start-up's
	// own transactions (the migrations, one each) would otherwise be
	// counted as the idle server's.
	time.Sleep(11 * time.Second)
	a, err := count()
	if err != nil {
		return 0, err
	}
	time.Sleep(d)
	b, err := count()
	if err != nil {
		return 0, err
	}
	return float64(b-a) / d.Seconds(), nil
}

// rssUnderLoad runs an open loop and samples this process's resident set
// (the server's: the load runs in its own process) every 200 ms; it
// returns the peak in MB.
func rssUnderLoad(spec loadSpec) (float64, loadResult, error) {
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		peak float64
	)
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, rssMB())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	shots, err := openLoopProc(spec)
	close(done)
	wg.Wait()
	return peak, summarize(shots, 201), err
}

// rssMB is this process's VmRSS in MB (0 where /proc is missing).
func rssMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// loadavg is the 1-minute load average (uptime's first figure).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
