// Command quitabench measures Quita's hot paths over real HTTP on
// Postgres + Redis, the production setup: create-charge throughput
// (closed loop), create-charge latency at a fixed offered rate (open loop,
// latency measured from each request's scheduled start so a slow server
// cannot hide its queueing), and get-charge latency. It creates a scratch
// database and Redis prefix and removes both when done. `make bench` runs
// it; the targets are those of the foundation issue.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quitabench:", err)
		os.Exit(1)
	}
}

type target struct {
	name   string
	got    float64
	unit   string
	want   float64
	higher bool // higher is better
}

// row is one line of the table: a figure and its target, the reference
// the target derives from (measured in the same run) and the 1-minute
// load average when the figure was taken.
type row struct {
	target
	ref, load string
}

func rowsOf(ts []target) []row {
	out := make([]row, len(ts))
	for i, t := range ts {
		out[i] = row{target: t, load: loadavg()}
	}
	return out
}

func (t target) ok() bool {
	if t.higher {
		return t.got >= t.want
	}
	return t.got <= t.want
}

func run() error {
	pgURL := flag.String("postgres", envOr("QUITA_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "admin Postgres URL")
	redisURL := flag.String("redis", envOr("QUITA_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis URL")
	dur := flag.Duration("duration", 10*time.Second, "length of each phase")
	workers := flag.Int("workers", 32, "closed-loop concurrency (and the reference's connections)")
	rate := flag.Int("rate", 500, "open-loop offered creates per second")
	getRate := flag.Int("get-rate", 1000, "open-loop offered gets per second")
	rssRate := flag.Int("rss-rate", 1000, "offered creates per second while RSS is sampled")
	idle := flag.Duration("idle", 30*time.Second, "how long to count the queries of the idle server (0 skips)")
	overload := flag.Bool("overload", true, "offer twice the measured capacity, then the normal rate again")
	strict := flag.Bool("strict", false, "exit non-zero when a target is missed")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (server and closed-loop load) to this file")
	memprofile := flag.String("memprofile", "", "write the server's allocation profile of the whole run to this file (go tool pprof -sample_index=alloc_space)")
	overloadProfile := flag.String("overload-cpuprofile", "", "write a CPU profile of the overload phase to this file")
	refunds := flag.Bool("refunds", true, "also run the refund pipeline benchmark (quitad in its own processes)")
	refundRate := flag.Int("refund-rate", 300, "refund benchmark: offered refunds per second (and twice that)")
	refundDur := flag.Duration("refund-duration", 5*time.Second, "refund benchmark: length of each phase")
	driver := flag.String("closed-loop", "auto", "the closed loop's load generator: wrk, go (this program's own), or auto (wrk when installed)")
	maxInFlight := flag.Int("max-in-flight", 0, "the server's QUITA_MAX_IN_FLIGHT (0: its default; -1: no admission control, to compare)")
	overloadOnly := flag.Bool("overload-only", false, "after the closed loop, only the overload phase")
	quick := flag.Bool("quick", false, "only the reference, the cold open loop and the closed loop (before/after comparisons)")
	readsOnly := flag.Bool("reads-only", false, "only the GET open loop (before/after comparisons of the read path)")
	loadgen := flag.Bool("loadgen", false, "internal: run as the open-loop load generator (spec on stdin)")
	flag.Parse()
	if *loadgen {
		return loadgenMain()
	}
	if *refundsOnly {
		return runRefundsOnly(*pgURL, *redisURL, *refundDur, *refundRate, *strict)
	}
	if *payoutsOnly {
		return runPayoutsOnly(*pgURL, *redisURL, *payoutDur, *payoutRate, *strict)
	}
	if *longpollOnly {
		return runLongpollOnly(*pgURL, *redisURL, *strict)
	}
	if *memprofile != "" {
		defer func() {
			if err := writeHeapProfile(*memprofile); err != nil {
				fmt.Fprintln(os.Stderr, "quitabench: memprofile:", err)
			}
		}()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	dsn, drop, err := scratchDatabase(ctx, *pgURL)
	if err != nil {
		return err
	}
	defer drop()
	prefix := "bench:" + randHex(6) + ":"
	defer cleanRedis(ctx, *redisURL, prefix)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	origin := "http://" + ln.Addr().String()
	cfg := wiring.Config{
		DatabaseURL: dsn, RedisURL: *redisURL, RedisPrefix: prefix,
		BaseURL: origin + "/v1", CheckoutURLBase: origin + "/checkout",
		PixFees:     domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}},
		MaxInFlight: *maxInFlight,
	}
	wiring.TuneGC(os.Getenv) // as quitad serves
	a, cleanup, err := wiring.InitializeApp(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer cleanup()
	// As quitad serves: the HTTP server and every background worker.
	srv := &http.Server{Handler: a.Handler}
	go srv.Serve(ln)
	defer srv.Close()
	var bg sync.WaitGroup
	defer bg.Wait()
	defer cancel()
	bg.Go(func() { a.Workers.Run(ctx) })
	bg.Go(func() { a.Webhooks.Run(ctx) })

	fmt.Printf("quitabench: Postgres + Redis, %d CPUs, phases of %s, load %s\n", numCPU(), *dur, loadavg())
	var targets []row
	if *idle > 0 {
		// Nothing to do yet: count what the workers ask the database.
		time.Sleep(2 * time.Second) // past the start-up (migrations)
		qps, err := idleQueries(ctx, *pgURL, dsn, *idle)
		if err != nil {
			return err
		}
		fmt.Printf("idle: %.2f transactions/s over %s\n", qps, *idle)
		targets = append(targets, row{target{"idle queries", qps, "xact/s", 5, false}, "", loadavg()})
	}

	refTPS, how, err := reference(ctx, dsn, *workers, *dur)
	if err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	refLoad := loadavg()
	fmt.Printf("reference (%s, %d connections): minimal create (1 charge row + 1 outbox row, one round trip) %.0f/s\n", how, *workers, refTPS)

	acct, err := a.Accounts.CreateAccount(ctx, app.NewAccountInput{Name: "Bench", Email: "bench-" + randHex(4) + "@example.com", Password: "bench-password-1"})
	if err != nil {
		return err
	}
	// One key carries the whole load: lift its per-key rate limit (default
	// 100/s, burst 200) so the benchmark measures charges, not 429s.
	if err := a.Dashboard.GuardSettings.Set(ctx, acct.AccountID, ports.AccountSettings{RateLimitPerSecond: 1_000_000, RateLimitBurst: 1_000_000}); err != nil {
		return err
	}
	c := &client{base: cfg.BaseURL, key: acct.LiveKey, http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute,
	}}}
	spec := loadSpec{URL: cfg.BaseURL, Key: acct.LiveKey, Op: "create", Rate: *rate, Duration: *dur}
	// Warm up connections and caches, with few requests.
	closedLoop(c, 4, time.Second)

	if *readsOnly {
		ts, err := getPhase(c, cfg.BaseURL, acct.LiveKey, *getRate, *dur)
		if err != nil {
			return err
		}
		return printTable(ts, *strict)
	}
	ck := checkpoints(ctx, dsn)
	cold, err := openLoopProc(spec)
	if err != nil {
		return err
	}
	coldR := summarize(cold, http.StatusCreated)
	fmt.Printf("create, open loop at %d/s from a cold start: %s\n", *rate, coldR)
	ck = printCheckpoints(ctx, dsn, ck)
	targets = append(targets, openLoopTargets(fmt.Sprintf("create %d/s cold", *rate), coldR, loadavg())...)

	cpu0, wal0, xact0, fl0 := takeCPU(), walLSN(ctx, dsn), commits(ctx, dsn), sampleFlight(origin)
	cl, err := closedLoopPhase(ctx, *driver, loadSpec{URL: cfg.BaseURL, Key: acct.LiveKey, Op: "create", Workers: *workers, Duration: *dur})
	if err != nil {
		return err
	}
	cpu1, wal1, xact1, fl1 := takeCPU(), walLSN(ctx, dsn), commits(ctx, dsn), sampleFlight(origin)
	tput := float64(cl.ok) / cl.seconds
	fmt.Printf("create, closed loop (%d connections, %s in its own process): %d charges in %.1fs = %.0f/s, errors %d, p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms\n",
		*workers, cl.driver, cl.ok, cl.seconds, tput, cl.errors, cl.p50, cl.p99, cl.p999)
	fmt.Printf("    CPU per create in the closed loop: %s\n", cpu0.per(cpu1, cl.ok))
	if wal0 > 0 && wal1 > wal0 && cl.ok > 0 {
		fmt.Printf("    WAL per create in the closed loop: %.1f KB (the whole cluster's, workers included)\n", float64(wal1-wal0)/1024/float64(cl.ok))
	}
	if xact0 >= 0 && xact1 > xact0 && cl.ok > 0 {
		fmt.Printf("    creates per committed transaction in the closed loop: %.1f (the database's, workers included; counts good to a second)\n", float64(cl.ok)/float64(xact1-xact0))
	}
	fmt.Print(flightNote(fl0, fl1, time.Duration(cl.seconds*float64(time.Second))))
	ck = printCheckpoints(ctx, dsn, ck)
	targets = append(targets, row{target{"create closed loop", tput, "charges/s", 0.4 * refTPS, true},
		fmt.Sprintf("0.4 x %.0f/s %s (load %s), %s", refTPS, how, refLoad, cl.driver), loadavg()})

	if *quick {
		return printTable(targets, *strict)
	}
	if *overloadOnly && tput > 0 {
		ts, err := overloadPhase(ctx, a, dsn, spec, int(2*tput), *rate, *overloadProfile, pct(coldR.okLat, 99))
		if err != nil {
			return err
		}
		return printTable(append(targets, ts...), *strict)
	}
	dirty0 := dirtyMB()
	after, err := openLoopProc(spec)
	if err != nil {
		return err
	}
	afterR := summarize(after, http.StatusCreated)
	fmt.Printf("create, open loop at %d/s right after the closed-loop burst: %s\n", *rate, afterR)
	fmt.Print(dirtyNote(dirty0, dirtyMB()))
	ck = printCheckpoints(ctx, dsn, ck)
	targets = append(targets, openLoopTargets(fmt.Sprintf("create %d/s after burst", *rate), afterR, loadavg())...)

	if *overload && tput > 0 {
		ts, err := overloadPhase(ctx, a, dsn, spec, int(2*tput), *rate, *overloadProfile, pct(coldR.okLat, 99))
		if err != nil {
			return err
		}
		printCheckpoints(ctx, dsn, ck)
		targets = append(targets, ts...)
	}

	ts, err := getPhase(c, cfg.BaseURL, acct.LiveKey, *getRate, *dur)
	if err != nil {
		return err
	}
	targets = append(targets, ts...)

	rss, rssR, err := rssUnderLoad(loadSpec{URL: cfg.BaseURL, Key: acct.LiveKey, Op: "create", Rate: *rssRate, Duration: *dur})
	if err != nil {
		return err
	}
	fmt.Printf("create, open loop at %d/s for RSS: %s; peak RSS %.0f MB\n", *rssRate, rssR, rss)
	targets = append(targets, row{target{fmt.Sprintf("RSS at %d creates/s", *rssRate), rss, "MB", 150, false},
		fmt.Sprintf("%d ok of %d offered", rssR.ok, rssR.offered), loadavg()})

	if *refunds {
		phases, err := runRefundBench(ctx, *pgURL, *redisURL, *refundDur, *refundRate)
		if err != nil {
			return fmt.Errorf("refund benchmark: %w", err)
		}
		targets = append(targets, refundTargets(phases, *refundRate)...)
	}
	if *payoutsOn {
		ph, err := runPayoutBench(ctx, *pgURL, *redisURL, *payoutDur, *payoutRate)
		if err != nil {
			return fmt.Errorf("payout benchmark: %w", err)
		}
		targets = append(targets, payoutRows(ph)...)
	}
	if *longpollOn {
		ph, err := runLongpollBench(ctx, *pgURL, *redisURL)
		if err != nil {
			return fmt.Errorf("long-poll benchmark: %w", err)
		}
		targets = append(targets, longpollRows(ph)...)
	}
	return printTable(targets, *strict)
}

// dirtyMB reads the kernel's dirty file pages (/proc/meminfo), in MB; -1
// when it cannot. The kernel writes a file's dirty pages back about 30 s
// after the file was first dirtied, all at once, and commits' WAL flushes
// queue behind that write-back (docs/performance.md).
func dirtyMB() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	kb, ok := meminfoKB(string(b), "Dirty")
	if !ok {
		return -1
	}
	return float64(kb) / 1024
}

// meminfoKB finds field's value in /proc/meminfo's text, in kB.
func meminfoKB(meminfo, field string) (int64, bool) {
	for line := range strings.Lines(meminfo) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return v, err == nil
	}
	return 0, false
}

// dirtyNote says how much the kernel had left to write back when a phase
// started and when it ended; empty when either is unknown.
func dirtyNote(start, end float64) string {
	if start < 0 || end < 0 {
		return ""
	}
	return fmt.Sprintf("    the kernel's dirty file pages (write-back due 30 s after a file was first dirtied): %.0f MB at the start, %.0f MB at the end\n", start, end)
}

// printCheckpoints prints the checkpoints started since before (the
// count checkpoints gave then) and returns the count now.
func printCheckpoints(ctx context.Context, dsn string, before int64) int64 {
	now := checkpoints(ctx, dsn)
	fmt.Print(checkpointNote(before, now))
	return now
}

// getPhase creates 200 charges, then offers GETs of them at rate for d.
func getPhase(c *client, baseURL, key string, rate int, d time.Duration) ([]row, error) {
	ids := make([]string, 0, 200)
	for range 200 {
		id, err := c.create()
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	origin := strings.TrimSuffix(baseURL, "/v1")
	h0 := sampleRoute(origin, http.MethodGet, "/v1/charges/{id}")
	gets, err := openLoopProc(loadSpec{URL: baseURL, Key: key, Op: "get", IDs: ids, Rate: rate, Duration: d})
	if err != nil {
		return nil, err
	}
	h1 := sampleRoute(origin, http.MethodGet, "/v1/charges/{id}")
	getR := summarize(gets, http.StatusOK)
	fmt.Printf("get, open loop at %d/s: %s\n", rate, getR)
	fmt.Print(routeNote(h0, h1, "0.001", "0.0025", "0.005", "0.01"))
	return []row{{target{fmt.Sprintf("get p99 at %d/s", rate), pct(getR.okLat, 99), "ms", 5, false}, "", loadavg()},
		{target{"get errors", float64(getR.shed + getR.failed), "requests", 0, false}, "", loadavg()}}, nil
}

// openLoopTargets are an open loop's latency and error targets.
func openLoopTargets(name string, r loadResult, load string) []row {
	return []row{
		{target{name + " p99", pct(r.okLat, 99), "ms", 20, false}, "", load},
		{target{name + " p99.9", pct(r.okLat, 99.9), "ms", 50, false}, "", load},
		{target{name + " errors", float64(r.shed + r.failed), "requests", 0, false}, fmt.Sprintf("of %d", r.offered), load},
	}
}

// printTable prints one table: each figure, its target, the reference it
// was measured against and the load average when it was taken; with
// strict, a miss is an error.
func printTable(targets []row, strict bool) error {
	missed := 0
	fmt.Printf("\n%-4s %-34s %10s %-10s %-12s %-40s %s\n", "", "figure", "measured", "unit", "target", "reference (same run)", "load 1m")
	for _, t := range targets {
		mark := "PASS"
		if !t.ok() {
			mark, missed = "MISS", missed+1
		}
		cmp := "<="
		if t.higher {
			cmp = ">="
		}
		ref := t.ref
		if ref == "" {
			ref = "-"
		}
		want := fmt.Sprintf("%.0f", t.want)
		if t.want < 10 && t.want != math.Round(t.want) {
			want = fmt.Sprintf("%.1f", t.want) // a ratio such as 1.5
		}
		fmt.Printf("%-4s %-34s %10.1f %-10s %-12s %-40s %s\n", mark, t.name, t.got, t.unit, cmp+" "+want, ref, t.load)
	}
	if strict && missed > 0 {
		return fmt.Errorf("%d target(s) missed", missed)
	}
	return nil
}

type client struct {
	base, key string
	http      *http.Client
}

var body = []byte(`{"amount":1990,"payment_method":"pix","description":"Pedido bench","customer":{"name":"Maria Silva","email":"maria@example.com"}}`)

func (c *client) create() (string, error) {
	req, _ := http.NewRequest(http.MethodPost, c.base+"/charges", bytes.NewReader(body))
	req.Header.Set("apikey", c.key)
	req.Header.Set("Idempotency-Key", "bench-"+randHex(12))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("create: status %d", resp.StatusCode)
	}
	return out.ID, nil
}

// closedLoop runs workers in this process that each send the next request
// when the last one answers: only the warm-up, which is not measured (the
// measured closed loop runs in the load-generator process).
func closedLoop(c *client, workers int, d time.Duration) (int, int, []float64) {
	var (
		mu   sync.Mutex
		lat  []float64
		errs int
		wg   sync.WaitGroup
	)
	stop := time.Now().Add(d)
	for range workers {
		wg.Go(func() {
			var mine []float64
			bad := 0
			for time.Now().Before(stop) {
				t := time.Now()
				if _, err := c.create(); err != nil {
					bad++
					continue
				}
				mine = append(mine, float64(time.Since(t).Microseconds())/1000)
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	return len(lat), errs, lat
}

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

func scratchDatabase(ctx context.Context, admin string) (string, func(), error) {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	name := "quita_bench_" + randHex(6)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("create scratch database (is Postgres up? run make services): %w", err)
	}
	dsn := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	if u := os.Getenv("QUITA_TEST_POSTGRES_URL"); u != "" {
		dsn = replaceDB(u, name)
	}
	return dsn, func() {
		_, _ = db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		db.Close()
	}, nil
}

func replaceDB(u, name string) string {
	// postgres://user@host:port/db?params → same with db replaced.
	i := bytes.IndexByte([]byte(u[len("postgres://"):]), '/')
	if i < 0 {
		return u
	}
	head := u[:len("postgres://")+i+1]
	rest := u[len(head):]
	if q := bytes.IndexByte([]byte(rest), '?'); q >= 0 {
		return head + name + rest[q:]
	}
	return head + name
}

func cleanRedis(ctx context.Context, url, prefix string) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	// The run's context is cancelled by the time this runs; the clean-up
	// must not be. Each create's cached answer would otherwise stay in the
	// machine's Redis for 24 h: ~1.1 KB a charge, a gigabyte after a dozen
	// runs.
	ctx = context.WithoutCancel(ctx)
	keys := make([]string, 0, 1000)
	flush := func() {
		if len(keys) > 0 {
			rdb.Unlink(ctx, keys...)
			keys = keys[:0]
		}
	}
	// redis_rate puts its own "rate:" before the prefix.
	for _, pattern := range []string{prefix + "*", "rate:" + prefix + "*"} {
		iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if keys = append(keys, iter.Val()); len(keys) == cap(keys) {
				flush()
			}
		}
	}
	flush()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func numCPU() int { return runtime.NumCPU() }

// writeHeapProfile writes the allocations sampled since the start (the
// heap profile's alloc_space and alloc_objects) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
