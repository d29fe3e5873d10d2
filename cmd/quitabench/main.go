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
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
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
	workers := flag.Int("workers", 64, "closed-loop concurrency")
	rate := flag.Int("rate", 500, "open-loop offered creates per second")
	strict := flag.Bool("strict", false, "exit non-zero when a target is missed")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (server and load) to this file")
	refunds := flag.Bool("refunds", true, "also run the refund pipeline benchmark (quitad in its own processes)")
	refundRate := flag.Int("refund-rate", 300, "refund benchmark: offered refunds per second (and twice that)")
	refundDur := flag.Duration("refund-duration", 5*time.Second, "refund benchmark: length of each phase")
	flag.Parse()
	if *refundsOnly {
		return runRefundsOnly(*pgURL, *redisURL, *refundDur, *refundRate, *strict)
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
	ctx := context.Background()

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
		PixFees: domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}},
	}
	a, cleanup, err := wiring.InitializeApp(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer cleanup()
	srv := &http.Server{Handler: a.Handler}
	go srv.Serve(ln)
	defer srv.Close()
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

	fmt.Printf("quitabench: Postgres + Redis, %d CPUs, phases of %s\n", numCPU(), *dur)
	// Warm up connections and caches.
	closedLoop(c, 16, 2*time.Second)

	n, errs, lat := closedLoop(c, *workers, *dur)
	tput := float64(n) / dur.Seconds()
	fmt.Printf("create, closed loop (%d workers): %d charges in %s = %.0f/s, errors %d, p50 %.1f ms, p99 %.1f ms\n",
		*workers, n, *dur, tput, errs, pct(lat, 50), pct(lat, 99))

	olat, oerrs := openLoop(*rate, *dur, func() error { _, err := c.create(); return err })
	fmt.Printf("create, open loop at %d/s: %d requests, errors %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		*rate, len(olat), oerrs, pct(olat, 50), pct(olat, 99), pct(olat, 100))

	ids := make([]string, 0, 200)
	for range 200 {
		id, err := c.create()
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	var i atomic.Int64
	glat, gerrs := openLoop(*rate, *dur, func() error {
		return c.get(ids[int(i.Add(1))%len(ids)])
	})
	fmt.Printf("get, open loop at %d/s: %d requests, errors %d, p50 %.2f ms, p99 %.2f ms\n",
		*rate, len(glat), gerrs, pct(glat, 50), pct(glat, 99))

	targets := []target{
		{"create throughput", tput, "charges/s", 1000, true},
		{"create p99 at 500/s", pct(olat, 99), "ms", 50, false},
		{"get p99", pct(glat, 99), "ms", 10, false},
	}
	if *refunds {
		phases, err := runRefundBench(ctx, *pgURL, *redisURL, *refundDur, *refundRate)
		if err != nil {
			return fmt.Errorf("refund benchmark: %w", err)
		}
		targets = append(targets, refundTargets(phases, *refundRate)...)
	}
	return report(targets, *strict)
}

// report prints each target's verdict; with strict, a miss is an error.
func report(targets []target, strict bool) error {
	missed := 0
	for _, t := range targets {
		mark := "PASS"
		if !t.ok() {
			mark, missed = "MISS", missed+1
		}
		cmp := "<="
		if t.higher {
			cmp = ">="
		}
		fmt.Printf("  %s %-22s %8.1f %-9s (target %s %.0f)\n", mark, t.name, t.got, t.unit, cmp, t.want)
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

func (c *client) get(id string) error {
	req, _ := http.NewRequest(http.MethodGet, c.base+"/charges/"+id, nil)
	req.Header.Set("apikey", c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get: status %d", resp.StatusCode)
	}
	return nil
}

// closedLoop runs workers that each send the next request when the last
// one answers.
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

// openLoop starts one request every 1/rate seconds whether or not earlier
// ones answered, and measures each from its scheduled start.
func openLoop(rate int, d time.Duration, do func() error) ([]float64, int) {
	var (
		mu   sync.Mutex
		lat  []float64
		errs int
		wg   sync.WaitGroup
	)
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	total := int(d / interval)
	for i := range total {
		scheduled := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(scheduled))
		wg.Go(func() {
			err := do()
			ms := float64(time.Since(scheduled).Microseconds()) / 1000
			mu.Lock()
			if err != nil {
				errs++
			} else {
				lat = append(lat, ms)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return lat, errs
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
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
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
