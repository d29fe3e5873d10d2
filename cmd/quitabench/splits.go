package main

// The split-charge benchmark (target: split charge creates ≥ 300/s with 3
// splits each, on Postgres): quitad runs as its own process on a scratch
// Postgres database and Redis, as in the payout benchmark; a platform
// gets -splits sub-accounts through POST /v1/subaccounts, then the
// open-loop load generator, a process of its own, offers POST /v1/charges
// with one split for each of them — fixed amounts and percents in turn —
// at a fixed rate with distinct Idempotency-Keys, each request timed from
// its scheduled send. A split create adds one read of the account's fees
// and one of its sub-accounts to the create path (app/charge_splits.go).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/quitapix/quita/domain"
)

var (
	splitsPerCharge = flag.Int("splits", 3, "also run the split-charge create benchmark with this many splits a charge, fixed and percent in turn (1-20; 0 leaves it out); quitad in its own process")
	splitsOnly      = flag.Bool("splits-only", false, "run the split-charge create benchmark alone (quitad in its own process)")
	splitRate       = flag.Int("split-rate", 400, "split benchmark: offered split charge creates per second (above the 300/s target, so the figure shows the headroom)")
	splitDur        = flag.Duration("split-duration", 5*time.Second, "split benchmark: length of the phase")
)

// splitWarmup split charges are created one by one before the phase:
// quitad has just started (pool, prepared statements, the caches of the
// account's fees and sub-accounts), and each answer is checked to carry
// its splits.
const splitWarmup = 16

// splitPhase is what the split phase measured.
type splitPhase struct {
	splits, rate int
	d            time.Duration
	load         loadResult
	// perSecond is the 201s per second (answeredRate).
	perSecond float64
	// stored counts the charges the database holds with splits, warm-up
	// included: every 201 must be one.
	stored int
}

// splitBody is each benchmark charge: R$ 100.00 by Pix shared with
// sellers in order, a fixed R$ 3.00 and 3 % of the net in turn, which
// fits the net whatever the number of splits up to domain.MaxSplits.
func splitBody(sellers []string) ([]byte, error) {
	splits := make([]map[string]any, len(sellers))
	for i, s := range sellers {
		splits[i] = map[string]any{"account": s}
		if i%2 == 0 {
			splits[i]["amount"] = 300
		} else {
			splits[i]["percent"] = "3.00"
		}
	}
	return json.Marshal(map[string]any{"amount": 10000, "payment_method": "pix", "description": "Pedido bench split",
		"customer": map[string]any{"name": "Maria Silva", "email": "maria@example.com"}, "splits": splits})
}

// runSplitBench starts one quitad, gives its merchant n sub-accounts,
// creates the warm-up split charges and offers rate split creates/s for d.
func runSplitBench(ctx context.Context, pgURL, redisURL string, d time.Duration, rate, n int) (splitPhase, error) {
	ph := splitPhase{splits: n, rate: rate, d: d}
	if n < 1 || n > domain.MaxSplits {
		return ph, fmt.Errorf("-splits %d: a charge takes 1 to %d splits", n, domain.MaxSplits)
	}
	b, done, err := newQuitadBench(ctx, pgURL, redisURL, "splits")
	if err != nil {
		return ph, err
	}
	defer done()
	p, err := b.start()
	if err != nil {
		return ph, err
	}
	defer p.stop()
	sellers := make([]string, n)
	for i := range sellers {
		s, st, err := b.post(p.base, "/subaccounts", map[string]any{"name": fmt.Sprintf("Vendedor %d", i+1),
			"document": "11222333000181", "email": fmt.Sprintf("vendedor%d@example.com", i+1)}, "")
		if sellers[i], _ = s["id"].(string); err != nil || st != http.StatusCreated || sellers[i] == "" {
			return ph, fmt.Errorf("sub-account %d: status %d, %v %v", i+1, st, err, s)
		}
	}
	body, err := splitBody(sellers)
	if err != nil {
		return ph, err
	}
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	for i := range splitWarmup {
		c, st, err := b.post(p.base, "/charges", req, b.nextKey())
		if got, _ := c["splits"].([]any); err != nil || st != http.StatusCreated || len(got) != n {
			return ph, fmt.Errorf("warm-up split charge %d: status %d, %v %v", i, st, err, c)
		}
	}
	shots, err := openLoopProc(loadSpec{URL: p.base, Key: b.key, Op: "create", Body: body, Rate: rate, Duration: d})
	if err != nil {
		return ph, err
	}
	ph.load = summarize(shots, http.StatusCreated)
	ph.perSecond = answeredRate(shots, http.StatusCreated, d)
	err = b.db.QueryRowContext(ctx, `SELECT count(*) FROM charges WHERE splits IS NOT NULL`).Scan(&ph.stored)
	return ph, err
}

// splitRows prints the phase and returns its row: at least 300 split
// creates/s, with p50/p99/p99.9 and the shed and failed requests beside
// the figure.
func splitRows(ph splitPhase) []row {
	fmt.Printf("split charges (%d splits each), open loop at %d/s for %s (quitad in its own process, after %d warm-up creates): %s; 201s %.1f/s; charges stored with splits %d\n",
		ph.splits, ph.rate, ph.d, splitWarmup, ph.load, ph.perSecond, ph.stored)
	rows := rowsOf([]target{{fmt.Sprintf("split creates/s, %d splits, %d/s", ph.splits, ph.rate), ph.perSecond, "charges/s", 300, true}})
	rows[0].ref = fmt.Sprintf("p50 %.1f p99 %.1f p99.9 %.1f ms; %d shed, %d failed of %d",
		pct(ph.load.okLat, 50), pct(ph.load.okLat, 99), pct(ph.load.okLat, 99.9), ph.load.shed, ph.load.failed, ph.load.offered)
	return rows
}

// runSplitsOnly is `quitabench -splits-only`: the split phase and its
// target, without the other benchmarks.
func runSplitsOnly(pgURL, redisURL string, d time.Duration, rate, n int, strict bool) error {
	ph, err := runSplitBench(context.Background(), pgURL, redisURL, d, rate, n)
	if err != nil {
		return fmt.Errorf("split benchmark: %w", err)
	}
	return printTable(splitRows(ph), strict)
}
