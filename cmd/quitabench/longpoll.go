package main

// The long-poll benchmark: do waiting GET /v1/events?wait= requests of
// many tenants cost another tenant's creates anything? quitad runs as its
// own process on a scratch Postgres database holding a large event
// history spread over the waiting tenants; each tenant keeps MaxWaiters
// long-polls waiting, with a type filter that matches none of its events
// (the costliest wait: every look at its page finds nothing); another
// tenant's creates are offered at a fixed rate, once with no long-poll and
// once with all of them waiting, each phase timed from the scheduled sends
// by the open-loop load generator. The long-polls come from a load
// generator process of their own.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

var (
	longpollOn       = flag.Bool("longpoll", true, "also run the long-poll benchmark (quitad in its own process)")
	longpollOnly     = flag.Bool("longpoll-only", false, "run the long-poll benchmark alone (quitad in its own process)")
	longpollEvents   = flag.Int("longpoll-events", 1_000_000, "long-poll benchmark: events in the history, spread over the waiting tenants")
	longpollTenants  = flag.Int("longpoll-tenants", 100, "long-poll benchmark: tenants keeping long-polls waiting")
	longpollWaiters  = flag.Int("longpoll-waiters", 10, "long-poll benchmark: long-polls each tenant keeps waiting")
	longpollRate     = flag.Int("longpoll-rate", 200, "long-poll benchmark: another tenant's offered creates per second")
	longpollDuration = flag.Duration("longpoll-duration", 10*time.Second, "long-poll benchmark: length of each phase")
)

// longpollFilter matches none of the seeded events (charge.created).
const longpollFilter = "charge.refunded"

// longpollPhase is what the long-poll benchmark measured.
type longpollPhase struct {
	tenants, waiters, events int
	quiet, waiting           loadResult
	// answered counts the long-polls' answers by status during the
	// waiting phase (200: the wait ended empty at its deadline; -1: the
	// requests sent, answered or still waiting).
	answered map[int]int
}

// runLongpollBench seeds the history, starts quitad, and measures the
// other tenant's creates without and then with the long-polls waiting.
func runLongpollBench(ctx context.Context, pgURL, redisURL string) (longpollPhase, error) {
	ph := longpollPhase{tenants: *longpollTenants, waiters: *longpollWaiters, events: *longpollEvents}
	b, done, err := newQuitadBench(ctx, pgURL, redisURL, "longpoll")
	if err != nil {
		return ph, err
	}
	defer done()
	keys, accounts := make([]string, ph.tenants), make([]string, ph.tenants)
	for i := range keys {
		out, err := b.admin("account", "create", "--name", fmt.Sprintf("Bench tenant %d", i), "--email", fmt.Sprintf("tenant%d-%s@example.com", i, randHex(4)))
		if err != nil {
			return ph, err
		}
		var acct struct{ AccountID, TestKey string }
		if err := json.Unmarshal(out, &acct); err != nil || acct.TestKey == "" {
			return ph, fmt.Errorf("account create printed %q: %v", out, err)
		}
		keys[i], accounts[i] = acct.TestKey, acct.AccountID
	}
	if err := seedEventHistory(ctx, b, accounts, ph.events); err != nil {
		return ph, err
	}
	p, err := b.start()
	if err != nil {
		return ph, err
	}
	defer p.stop()
	spec := loadSpec{URL: p.base, Key: b.key, Op: "create", Rate: *longpollRate, Duration: *longpollDuration}
	shots, err := openLoopProc(spec)
	if err != nil {
		return ph, err
	}
	ph.quiet = summarize(shots, http.StatusCreated)
	// The long-polls wait through the whole second phase: they start
	// first, and keep waiting until it has ended.
	waiting := make(chan error, 1)
	var answered map[int]int
	go func() {
		var err error
		answered, err = longpollProc(loadSpec{URL: p.base, Op: "longpoll", Keys: keys, Waiters: ph.waiters,
			Duration: *longpollDuration + 12*time.Second})
		waiting <- err
	}()
	// Every long-poll makes its first read (the page it asked for, found
	// empty) and then waits: the phase measures the waiting.
	time.Sleep(8 * time.Second)
	shots, err = openLoopProc(spec)
	if err != nil {
		return ph, err
	}
	ph.waiting = summarize(shots, http.StatusCreated)
	if err := <-waiting; err != nil {
		return ph, err
	}
	ph.answered = answered
	return ph, nil
}

// seedEventHistory writes n events of type charge.created spread evenly
// over accounts' test modes, a millisecond apart ending now, straight into
// charge_events (the outbox trigger off, so the dispatcher has nothing to
// fan out), then analyses the table as autovacuum would.
func seedEventHistory(ctx context.Context, b *refundBench, accounts []string, n int) error {
	stmts := []string{
		`ALTER TABLE charge_events DISABLE TRIGGER charge_events_outbox`,
		fmt.Sprintf(`INSERT INTO charge_events (id, account_id, mode, charge_id, type, payload, created_at)
			SELECT 'evt_seed' || g, ($1::text[])[1 + g %% %d], 'test', 'seedcharge' || g, 'charge.created',
				convert_to('{"type":"charge.created"}', 'UTF8'), now() - (%d - g) * interval '1 millisecond'
			FROM generate_series(1, %d) AS g`, len(accounts), n, n),
		`ALTER TABLE charge_events ENABLE TRIGGER charge_events_outbox`,
		`VACUUM ANALYZE charge_events`,
		// The seed's WAL is flushed to the data files now, not by a
		// checkpoint in the middle of a phase.
		`CHECKPOINT`,
	}
	for i, q := range stmts {
		var err error
		if i == 1 {
			_, err = b.db.ExecContext(ctx, q, accounts)
		} else {
			_, err = b.db.ExecContext(ctx, q)
		}
		if err != nil {
			return fmt.Errorf("seed the event history: %w", err)
		}
	}
	return nil
}

// longpollProc runs the long-polls of spec in a child process and returns
// how their answers went, by status.
func longpollProc(spec loadSpec) (map[int]int, error) {
	out, err := childOutput(spec)
	if err != nil {
		return nil, err
	}
	var answered map[int]int
	if err := json.Unmarshal(out, &answered); err != nil {
		return nil, fmt.Errorf("long-poll generator output: %w", err)
	}
	return answered, nil
}

// longpollMain is the child of longpollProc: spec.Waiters long-polls per
// key in spec.Keys, each asking again as soon as it is answered, until
// spec.Duration has passed; it writes the answers' statuses, counted
// (-1 counts the requests sent).
func longpollMain(spec loadSpec) error {
	client := &http.Client{Timeout: 40 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: len(spec.Keys) * spec.Waiters, MaxConnsPerHost: 0}}
	var (
		mu       sync.Mutex
		answered = map[int]int{}
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	url := spec.URL + "/events?limit=10&type=" + longpollFilter + "&wait=25"
	for _, key := range spec.Keys {
		for range spec.Waiters {
			wg.Go(func() {
				for !stop.Load() {
					mu.Lock()
					answered[-1]++ // sent
					mu.Unlock()
					status := 0
					req, err := http.NewRequest(http.MethodGet, url, nil)
					if err == nil {
						req.Header.Set("apikey", key)
						if resp, err := client.Do(req); err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							status = resp.StatusCode
						}
					}
					mu.Lock()
					answered[status]++
					mu.Unlock()
					if status != http.StatusOK {
						time.Sleep(time.Second) // refused: as a client backing off
					}
				}
			})
		}
	}
	time.Sleep(spec.Duration)
	stop.Store(true)
	// The waits still open end at their deadline; they are not counted.
	go func() { wg.Wait() }()
	mu.Lock()
	defer mu.Unlock()
	return json.NewEncoder(stdout()).Encode(answered)
}

// longpollRows are the benchmark's rows: the other tenant's create p99
// with the long-polls waiting, against the same phase without them.
func longpollRows(ph longpollPhase) []row {
	q, w := pct(ph.quiet.okLat, 99), pct(ph.waiting.okLat, 99)
	ratio := w / max(q, 0.001)
	if len(ph.waiting.okLat) == 0 {
		ratio = math.Inf(1) // no create succeeded at all
	}
	ref := fmt.Sprintf("p99 %.1f ms without, %.1f with; p50 %.1f/%.1f, p99.9 %.1f/%.1f; %d×%d waits over %d events; answers %v",
		q, w, pct(ph.quiet.okLat, 50), pct(ph.waiting.okLat, 50), pct(ph.quiet.okLat, 99.9), pct(ph.waiting.okLat, 99.9),
		ph.tenants, ph.waiters, ph.events, ph.answered)
	return []row{
		{target{"create p99 with long-polls ÷ without", ratio, "×", 1.2, false}, ref, loadavg()},
		{target{"create errors with long-polls", float64(ph.waiting.shed + ph.waiting.failed), "requests", 0, false},
			fmt.Sprintf("of %d", ph.waiting.offered), loadavg()},
	}
}

// runLongpollOnly is `quitabench -longpoll-only`.
func runLongpollOnly(pgURL, redisURL string, strict bool) error {
	ph, err := runLongpollBench(context.Background(), pgURL, redisURL)
	if err != nil {
		return fmt.Errorf("long-poll benchmark: %w", err)
	}
	return printTable(longpollRows(ph), strict)
}
