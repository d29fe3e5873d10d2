package main

// The refund pipeline benchmark: quitad runs as its own
// process (one, then two on the same Postgres), this process is the load
// generator over real HTTP, and each refund's latency runs from its
// scheduled send time to the moment the database marked it REFUNDED.
//
// The sandbox answers at once, so there one process is bound by CPU: on a
// machine whose cores it already fills, a second process cannot add
// throughput. At a real PSP each refund waits for two round trips (the
// refund, its status), so a process is bound by those waits times its
// concurrency, and a second process should double it: the PSP-latency
// phases measure that, with the sandbox waiting -refund-psp-latency per
// call (QUITA_SANDBOX_LATENCY). A process keeps up to 256 refund calls in
// flight (app's refundLanes), so it is bound by the PSP rather than by
// this machine's CPU only at about 1 s per call: at 100 ms one process
// alone keeps up with 250/s. Preparing each phase's charges then waits
// that second on every cob create too.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// quitadProc is one `quitad serve` process of the benchmark.
type quitadProc struct {
	base string
	cmd  *exec.Cmd
	// exited has the process's end once it ended (cmd.Wait's error).
	exited chan error
}

type refundBench struct {
	bin     string
	env     []string
	db      *sql.DB
	http    *http.Client
	key     string
	account string
	seq     atomic.Int64
}

// refundPhase is what one load phase measured.
type refundPhase struct {
	procs, rate int
	// latency is the sandbox's simulated PSP round trip per call.
	latency            time.Duration
	sent, done, failed int
	perSecond          float64
	lat                []float64 // ms, scheduled send → REFUNDED
	// CPU the quitad processes and their Postgres backends used over the
	// phase, per refund (ms; Linux only, else 0): what the pipeline costs
	// whatever the machine's load.
	quitadCPU, postgresCPU float64
	// The two halves of lat: the create (scheduled send → its 201
	// answer, the refund committed) and the worker (201 → REFUNDED).
	createLat, workLat []float64
}

func runRefundBench(ctx context.Context, pgURL, redisURL string, d time.Duration, rate int) ([]refundPhase, error) {
	b, done, err := newQuitadBench(ctx, pgURL, redisURL, "refunds")
	if err != nil {
		return nil, err
	}
	defer done()
	var procs []*quitadProc
	stop := func() {
		for _, p := range procs {
			p.stop()
		}
		procs = nil
	}
	defer stop()
	// measure runs, with 1 up to -refund-procs processes whose sandbox
	// waits latency per call, a phase at each offered rate.
	var phases []refundPhase
	measure := func(latency time.Duration, rates ...int) error {
		for n := 1; n <= *refundProcs; n++ {
			for len(procs) < n {
				p, err := b.start("QUITA_SANDBOX_LATENCY=" + latency.String())
				if err != nil {
					return err
				}
				procs = append(procs, p)
			}
			for _, r := range rates {
				ph, err := b.phase(procs, r, d, latency)
				if err != nil {
					return err
				}
				phases = append(phases, ph)
			}
		}
		return nil
	}
	if err := measure(0, rate, 2*rate); err != nil {
		return nil, err
	}
	if *refundLatency > 0 {
		stop() // every refund has ended: nothing is left to the new processes
		if err := measure(*refundLatency, *refundPSPRate); err != nil {
			return nil, err
		}
	}
	return phases, nil
}

// newQuitadBench builds quitad and gives it a scratch database (Redis
// under its usual prefix) and a test-mode merchant whose request limit is
// lifted; the refund and payout benchmarks start quitad processes on it.
// done removes the database, the build and the merchant's Redis keys.
func newQuitadBench(ctx context.Context, pgURL, redisURL, name string) (b *refundBench, done func(), err error) {
	var undo []func()
	cleanup := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			cleanup() // not done: an error return has set it to nil
		}
	}()
	dir, err := os.MkdirTemp("", "quitabench-"+name+"-")
	if err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "quitad")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/quitad").CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("go build ./cmd/quitad (run from the module root): %v\n%s", err, out)
	}
	dsn, drop, err := scratchDatabase(ctx, pgURL)
	if err != nil {
		return nil, nil, err
	}
	undo = append(undo, drop)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { db.Close() })
	db.SetMaxOpenConns(1) // one backend of its own, left out of the CPU figures
	b = &refundBench{bin: bin, db: db, env: append(os.Environ(), "QUITA_DATABASE_URL="+dsn, "QUITA_REDIS_URL="+redisURL,
		"QUITA_LOG_LEVEL=error", "QUITA_SEED_DEMO=false", "QUITA_ACCOUNT_PASSWORD=bench-password-"+randHex(4)),
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512}}}
	if err := b.newAccount(name); err != nil {
		return nil, nil, err
	}
	// quitad keeps its keys under its default prefix: remove what the
	// merchant's creates cached there (24 h otherwise).
	undo = append(undo, func() { cleanRedis(ctx, redisURL, "quita:idem:"+b.account+":") })
	return b, cleanup, nil
}

func (b *refundBench) admin(args ...string) ([]byte, error) {
	cmd := exec.Command(b.bin, args...)
	cmd.Env = b.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("quitad %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), nil
}

// newAccount creates the merchant and lifts its request limit (the rate
// limiter is not what this measures).
func (b *refundBench) newAccount(name string) error {
	out, err := b.admin("account", "create", "--name", "Bench "+name, "--email", name+"-"+randHex(4)+"@example.com")
	if err != nil {
		return err
	}
	var acct struct{ AccountID, TestKey string }
	if err := json.Unmarshal(out, &acct); err != nil || acct.TestKey == "" {
		return fmt.Errorf("account create printed %q: %v", out, err)
	}
	b.key, b.account = acct.TestKey, acct.AccountID
	_, err = b.admin("account", "guards", "--account", acct.AccountID, "--rate", "1000000", "--burst", "1000000")
	return err
}

// start starts a quitad process with env added to the benchmark's. The
// port it is given was free a moment before, but the benchmark's own
// connections take ephemeral ports from the same range, so one of them
// may take it first: a process that exits before it answers is started
// again on another port, up to three times. One that neither answers nor
// exits within startWait is killed. The errors carry the end of what the
// process wrote to stderr.
func (b *refundBench) start(env ...string) (p *quitadProc, err error) {
	for range 3 {
		p, err = startQuitad(b.bin, append(append([]string{}, b.env...), env...), b.http, startWait)
		if !errors.Is(err, errExitedEarly) {
			break
		}
	}
	return p, err
}

func (b *refundBench) post(base, path string, body any, key string) (map[string]any, int, error) {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(raw))
	req.Header.Set("apikey", b.key)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out, resp.StatusCode, nil
}

func (b *refundBench) nextKey() string { return fmt.Sprintf("bench-refund-%08d", b.seq.Add(1)) }

// paidCharges creates and pays n charges, 32 at a time, before the
// measured phase: the phase measures refunds only.
func (b *refundBench) paidCharges(procs []*quitadProc, n int) ([]string, error) {
	ids := make([]string, n)
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				base := procs[i%len(procs)].base
				c, st, err := b.post(base, "/charges", map[string]any{"amount": 1000, "payment_method": "pix"}, b.nextKey())
				if err == nil && st == http.StatusCreated {
					id, _ := c["id"].(string)
					ids[i] = id
					_, st, err = b.post(base, "/test_helpers/charges/"+id+"/pay", map[string]any{}, "")
				}
				if err != nil || st >= 300 {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("prepare charge %d: status %d, %v", i, st, err)
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return ids, firstErr
}

// phase offers rate refunds/s for d, round-robin over procs (whose
// sandbox waits latency per call), then waits for every refund to end and
// reads when each became REFUNDED.
func (b *refundBench) phase(procs []*quitadProc, rate int, d time.Duration, latency time.Duration) (refundPhase, error) {
	ph := refundPhase{procs: len(procs), rate: rate, latency: latency}
	ids, err := b.paidCharges(procs, int(d.Seconds()*float64(rate)))
	if err != nil {
		return ph, err
	}
	cpu0, pg0 := b.cpu(procs)
	var (
		mu        sync.Mutex
		scheduled = map[string]time.Time{}
		acked     = map[string]time.Time{}
		failed    atomic.Int64
		wg        sync.WaitGroup
	)
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i, id := range ids {
		at := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(at))
		base := procs[i%len(procs)].base
		wg.Go(func() {
			r, st, err := b.post(base, "/payments/"+id+"/refund", map[string]any{"idempotencyKey": b.nextKey(), "amount": 500}, "")
			rid, _ := r["id"].(string)
			if err != nil || st != http.StatusCreated || rid == "" {
				failed.Add(1)
				return
			}
			now := time.Now()
			mu.Lock()
			scheduled[strings.TrimPrefix(rid, "re_")] = at
			acked[strings.TrimPrefix(rid, "re_")] = now
			mu.Unlock()
		})
	}
	wg.Wait()
	ph.sent, ph.failed = len(ids), int(failed.Load())
	if err := b.drain(); err != nil {
		return ph, err
	}
	rows, err := b.db.Query(`SELECT id, updated_at FROM refunds WHERE status = 'REFUNDED'`)
	if err != nil {
		return ph, err
	}
	var last time.Time
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return ph, err
		}
		if s, ok := scheduled[id]; ok {
			ph.lat = append(ph.lat, ms(at.Sub(s)))
			ph.createLat = append(ph.createLat, ms(acked[id].Sub(s)))
			ph.workLat = append(ph.workLat, ms(at.Sub(acked[id])))
			if at.After(last) {
				last = at
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ph, err
	}
	ph.done = len(ph.lat)
	if span := last.Sub(start).Seconds(); span > 0 {
		ph.perSecond = float64(ph.done) / span
	}
	if cpu1, pg1 := b.cpu(procs); ph.done > 0 {
		ph.quitadCPU, ph.postgresCPU = (cpu1-cpu0)/float64(ph.done), (pg1-pg0)/float64(ph.done)
	}
	return ph, nil
}

// drain waits until no refund is open (PENDING or IN_PROGRESS) — this
// phase's, and any whose create committed though its answer was lost — so
// none is left for the next phase to measure. It gives up when none
// ended for 30 s.
func (b *refundBench) drain() error {
	last, progress := -1, time.Now()
	for {
		var open int
		if err := b.db.QueryRow(`SELECT count(*) FROM refunds WHERE status IN ('PENDING', 'IN_PROGRESS')`).Scan(&open); err != nil {
			return err
		}
		if open == 0 {
			return nil
		}
		if last < 0 || open < last {
			last, progress = open, time.Now()
		}
		if time.Since(progress) > 30*time.Second {
			return fmt.Errorf("%d refunds still open and none ended in 30 s; the next phase would measure them", open)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var refundLatency = flag.Duration("refund-psp-latency", time.Second,
	"refund benchmark: the sandbox's simulated PSP round trip per call (QUITA_SANDBOX_LATENCY) in the phases that measure growth with a second process, long enough that processes are bound by it and not by CPU; 0 skips them")

var refundPSPRate = flag.Int("refund-psp-rate", 300,
	"refund benchmark: offered refunds/s in the PSP-latency phases, above what two processes bound by that latency can do (2 × 256 calls in flight ÷ 2 round trips a refund = 256/s at 1 s)")

var refundProcs = flag.Int("refund-procs", 2, "refund benchmark: measure with 1 up to this many quitad processes")

var refundsOnly = flag.Bool("refunds-only", false, "run the refund pipeline benchmark alone (quitad in its own processes)")

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
