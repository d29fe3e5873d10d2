//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// TestChaos is the fault-injection run (package doc; `make chaos`).
func TestChaos(t *testing.T) {
	cfg := loadConfig(t)
	t.Logf("CHAOS_SEED=%d (rerun with the same CHAOS_SEED to replay this schedule)", cfg.seed)
	t.Logf("config: %v", cfg)

	db := newDatabase(t)
	rdb := claimRedis(t)
	logDir := os.Getenv("CHAOS_LOG_DIR")
	if logDir == "" {
		logDir = t.TempDir()
	} else if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := buildQuitad(t, t.TempDir())
	env := append(quitaFree(os.Environ()),
		"QUITA_DATABASE_URL="+db.dsn, "QUITA_REDIS_URL="+rdb.url, "QUITA_SEED_DEMO=false",
		"QUITA_WEBHOOK_ALLOW_PRIVATE=true", "QUITA_LOG_LEVEL=warn", "QUITA_ACQUIRER=sandbox",
		"QUITA_JWT_SECRET="+randomHex(32))
	cl := newCluster(t, bin, logDir, env, 2)
	cl.admin(t, "migrate")
	accountID, key := cl.newAccount(t)
	if err := cl.start(cl.procs[0]); err != nil {
		t.Fatalf("start A: %v", err)
	}

	recv := newReceiver()
	defer recv.srv.Close()
	rec := newRecorder(time.Now())
	a := newAPI(cl, rec, key)
	endpoint := registerEndpoint(t, a, recv)

	faults := schedule(cfg.seed, cfg.duration)
	inj := &injector{cluster: cl, db: db, redis: rdb, api: a, seed: cfg.seed, grace: cfg.limits.grace}
	r := &run{cfg: cfg, cl: cl, api: a, rec: rec, inj: inj, recv: recv, checks: db.open(t),
		account: accountID, endpoint: endpoint, faults: faults, logDir: logDir}
	r.execute(t)
}

// run is one chaos run's parts, whatever it targets: quitad processes of
// its own (TestChaos) or the HA cluster behind HAProxy (TestChaosCluster).
type run struct {
	cfg      config
	cl       *cluster
	api      *api
	rec      *recorder
	inj      *injector
	recv     *receiver
	checks   *sql.DB // the run's database, for the checks
	account  string
	endpoint string
	faults   []fault
	logDir   string
	// reads, in cluster mode, lists charges in a loop beside the clients.
	reads *reader
}

// execute drives the load under the fault schedule, drains, checks the
// invariants and fails t on every violation.
func (r *run) execute(t *testing.T) {
	cfg, rec, a, inj := r.cfg, r.rec, r.api, r.inj
	for _, f := range r.faults {
		t.Logf("schedule %v", f)
	}
	hard, cancelHard := context.WithTimeout(context.Background(), cfg.duration+opDeadline+30*time.Second)
	defer cancelHard()
	stop, cancelStop := context.WithTimeout(hard, cfg.duration)
	defer cancelStop()

	var wg sync.WaitGroup
	wg.Go(func() { inj.run(hard, r.faults) })
	if r.reads != nil {
		wg.Go(func() { r.reads.loop(stop) })
	}
	for i := range cfg.clients {
		c := &client{api: a, name: "c" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), seed: cfg.seed,
			rng: rand.New(rand.NewPCG(uint64(cfg.seed), uint64(i)))}
		wg.Go(func() {
			for j := 0; stop.Err() == nil; j++ {
				c.iteration(hard, j)
			}
		})
	}
	wg.Wait()
	loadEnd := rec.since()
	t.Logf("load ended at +%.1fs; draining", loadEnd.Seconds())

	chk := &checker{db: r.checks, account: r.account, endpoint: r.endpoint, figures: map[string]int{}}
	ctx := context.Background()
	// The drain waits for every event and refund, up to CHAOS_DRAIN; the
	// refunds still open CHAOS_REFUND_DRAIN after the load are counted
	// against CHAOS_MAX_OPEN_REFUNDS (refunds keep up).
	drainStart := time.Now()
	var events, deliveries, refunds, openAtLoadEnd int
	openAfterRefundDrain, refundsDrained := -1, time.Duration(-1)
	for tick := 0; ; tick++ {
		var err error
		events, deliveries, refunds, err = chk.backlog(ctx)
		if err != nil {
			t.Fatalf("backlog: %v", err)
		}
		if tick == 0 {
			openAtLoadEnd = refunds
		}
		if refunds == 0 && refundsDrained < 0 {
			refundsDrained = time.Since(drainStart)
		}
		if openAfterRefundDrain < 0 && (refunds == 0 || time.Since(drainStart) >= cfg.refundDrain) {
			openAfterRefundDrain = refunds
		}
		if (events == 0 && deliveries == 0 && refunds == 0) || time.Since(drainStart) > cfg.drain {
			break
		}
		if tick%20 == 0 {
			t.Logf("drain +%.0fs: %d undispatched events, %d refunds open, deliveries not yet delivered: %s",
				time.Since(drainStart).Seconds(), events, refunds, chk.pendingDeliveries(ctx))
		}
		time.Sleep(250 * time.Millisecond)
	}
	drained := time.Since(drainStart)

	blockedAtEnd := finalReplay(hard, a, rec, cfg)
	if err := chk.charges(ctx, rec); err != nil {
		t.Fatalf("check charges: %v", err)
	}
	valid, invalid, attempts, invalidEx := r.recv.snapshot()
	if err := chk.events(ctx, valid, 15*time.Second); err != nil {
		t.Fatalf("check events: %v", err)
	}
	ledgerOut, ledgerOK := r.cl.ledgerVerify()

	outside := classify(rec.attempts, inj.windows)
	s := summary{cfg: cfg, rec: rec, inj: inj, chk: chk, outside: outside, loadEnd: loadEnd, drained: drained,
		backlog: [3]int{events, deliveries, refunds}, hooks: [3]int{attempts, len(valid), invalid}, ledger: ledgerOut,
		blockedAtEnd: blockedAtEnd, logDir: r.logDir, openAtLoadEnd: openAtLoadEnd, openAfterRefundDrain: openAfterRefundDrain,
		refundsDrained: refundsDrained, reads: r.reads}
	for _, line := range s.lines() {
		t.Log(line)
	}

	// The invariants; failures counts them for the closing line.
	failures := 0
	errorf := func(format string, args ...any) {
		failures++
		t.Errorf(format, args...)
	}
	for _, v := range append(append([]string{}, rec.violations...), chk.violations...) {
		errorf("violation: %s", v)
	}
	for _, e := range inj.errs {
		errorf("fault injection: %s", e)
	}
	if !ledgerOK {
		errorf("quitad ledger verify failed:\n%s", ledgerOut)
	}
	if invalid > 0 {
		errorf("%d webhook attempts had an invalid signature (first: %s)", invalid, invalidEx)
	}
	if len(blockedAtEnd) > 0 {
		errorf("%d keys still answer 409 idempotency_key_in_use after %v: %v", len(blockedAtEnd), cfg.limits.keyBlocked, blockedAtEnd)
	}
	s.checkThresholds(errorf)
	if r.reads != nil {
		s.checkCluster(errorf)
		t.Log(s.clusterLine(failures))
	}
}

// quitaFree drops inherited QUITA_* settings so the run's own apply.
func quitaFree(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "QUITA_") {
			out = append(out, kv)
		}
	}
	return out
}

// registerEndpoint subscribes the receiver to every event in the catalog.
func registerEndpoint(t *testing.T, a *api, recv *receiver) string {
	t.Helper()
	var events []string
	for _, d := range domain.EventCatalog {
		events = append(events, string(d.Event))
	}
	body, _ := json.Marshal(map[string]any{"url": recv.srv.URL + "/quita", "events": events})
	r := a.send(context.Background(), "setup", "", http.MethodPost, "/webhooks/endpoints", body, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("register webhook endpoint: %d %s %v", r.status, r.body, r.err)
	}
	recv.secret.Store(r.field("secret"))
	return r.field("id")
}

// finalReplay sends again every key that needed a retry, had no answer or
// met a 409 in use, and a seeded sample of the others: each must answer
// 201 with its one charge within the key-blocked threshold. It returns the
// keys that did not.
func finalReplay(ctx context.Context, a *api, rec *recorder, cfg config) []string {
	rec.mu.Lock()
	var all []*keyRec
	for _, k := range rec.keys {
		all = append(all, k)
	}
	rec.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	rng := rand.New(rand.NewPCG(uint64(cfg.seed), 0xf1a1))
	var pick []*keyRec
	for _, k := range all {
		if k.trials > 0 || !k.acked || k.inUse >= 0 || rng.IntN(len(all)) < 500 {
			pick = append(pick, k)
		}
	}
	var (
		mu    sync.Mutex
		stuck []string
		wg    sync.WaitGroup
		sem   = make(chan struct{}, 8)
	)
	for _, k := range pick {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rctx, cancel := context.WithTimeout(ctx, cfg.limits.keyBlocked)
			defer cancel()
			r := a.createCharge(rctx, "", k, 0)
			if r.status != http.StatusCreated {
				mu.Lock()
				stuck = append(stuck, k.key)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	rec.count("final replay")
	rec.mu.Lock()
	rec.ops["final replay"] = len(pick)
	rec.mu.Unlock()
	return stuck
}

// artifactPath is where a run keeps quitad's logs, for the summary.
func artifactPath(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
