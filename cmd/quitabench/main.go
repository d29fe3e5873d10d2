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
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

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
	seedOnly := flag.Bool("seed", false, "only fill a fresh database with a large history (-seed-charges, -seed-dsn) and report its size")
	seedCharges := flag.Int("seed-charges", 10_000_000, "seed: how many charges")
	seedAccounts := flag.Int("seed-accounts", 1000, "seed: how many accounts (the first holds half the charges)")
	seedDSN := flag.String("seed-dsn", "", "seed: a fresh database to fill (default: a new quita_seed_<hex>, kept)")
	seedKeys := flag.String("seed-keys", "quita-seed-keys.json", "seed: where the big account's test key is written (mode 0600)")
	flag.Parse()
	if *seedOnly {
		return runSeed(*pgURL, *seedDSN, *seedCharges, *seedAccounts, *seedKeys)
	}
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
	if *splitsOnly {
		return runSplitsOnly(*pgURL, *redisURL, *splitDur, *splitRate, *splitsPerCharge, *strict)
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
	if *splitsPerCharge > 0 {
		ph, err := runSplitBench(ctx, *pgURL, *redisURL, *splitDur, *splitRate, *splitsPerCharge)
		if err != nil {
			return fmt.Errorf("split benchmark: %w", err)
		}
		targets = append(targets, splitRows(ph)...)
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
