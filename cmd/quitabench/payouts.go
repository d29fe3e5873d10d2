package main

// The payout benchmark (target: payout creates ≥ 300/s on Postgres):
// quitad runs as its own process on a scratch Postgres database and
// Redis, as in the refund benchmark; its test-mode wallet is funded first
// through the public API (charges paid by their test helper), so no payout
// fails for want of balance; then the open-loop load generator, a process
// of its own, offers POST /v1/payouts at a fixed rate with distinct
// Idempotency-Keys, each request timed from its scheduled send.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

var (
	payoutsOn   = flag.Bool("payouts", true, "also run the payout-create benchmark (quitad in its own process)")
	payoutsOnly = flag.Bool("payouts-only", false, "run the payout-create benchmark alone (quitad in its own process)")
	payoutRate  = flag.Int("payout-rate", 400, "payout benchmark: offered payout creates per second (above the 300/s target, so the figure shows the headroom)")
	payoutDur   = flag.Duration("payout-duration", 5*time.Second, "payout benchmark: length of the phase")
)

// payoutBody is each benchmark payout: R$ 1.00 to a CPF key.
var payoutBody = []byte(`{"amount":100,"destination":{"pix_key":"52998224725"},"description":"bench payout"}`)

const (
	payoutAmount = 100
	// payoutWarmup payouts are created one by one before the phase:
	// quitad has just started (pool, prepared statements), and the first
	// answer names the fee.
	payoutWarmup = 16
	// payoutFunding is what the wallet is funded with per offered payout
	// (the amount, a fee of up to R$ 9.00 and the charges' own fees).
	payoutFunding = 1000
	// chargeLimit stays under the default per-charge amount guard.
	chargeLimit = 5_000_000
)

// payoutPhase is what the payout phase measured.
type payoutPhase struct {
	rate int
	d    time.Duration
	load loadResult
	// perSecond is the 201s per second of the phase: over the offered
	// window, or over the span from the first 201 answer to the last when
	// that was longer (a server that falls behind answers later).
	perSecond float64
	// statuses counts the phase's payouts (and the warm-up's) by status
	// once the payout worker has taken every pending one (or 30 s).
	statuses map[string]int
	ledger   string // quitad ledger verify's verdict
}

// runPayoutBench starts one quitad, funds its merchant's test wallet,
// creates the warm-up payouts and offers rate payouts/s for d.
func runPayoutBench(ctx context.Context, pgURL, redisURL string, d time.Duration, rate int) (payoutPhase, error) {
	ph := payoutPhase{rate: rate, d: d}
	b, done, err := newQuitadBench(ctx, pgURL, redisURL, "payouts")
	if err != nil {
		return ph, err
	}
	defer done()
	p, err := b.start()
	if err != nil {
		return ph, err
	}
	defer p.stop()
	offered := int(d / (time.Second / time.Duration(rate))) // as the load generator counts them
	if err := b.fundWallet(p, int64(offered+payoutWarmup)*payoutFunding); err != nil {
		return ph, err
	}
	fee, err := b.warmUpPayouts(p)
	if err != nil {
		return ph, err
	}
	if avail, err := b.available(p); err != nil {
		return ph, err
	} else if need := int64(offered) * (payoutAmount + fee); avail < need {
		return ph, fmt.Errorf("the wallet holds %d, the phase needs %d (fee %d a payout)", avail, need, fee)
	}
	shots, err := openLoopProc(loadSpec{URL: p.base, Key: b.key, Op: "payout", Rate: rate, Duration: d})
	if err != nil {
		return ph, err
	}
	ph.load = summarize(shots, http.StatusCreated)
	ph.perSecond = answeredRate(shots, http.StatusCreated, d)
	if ph.statuses, err = b.payoutStatuses(30 * time.Second); err != nil {
		return ph, err
	}
	out, err := b.admin("ledger", "verify")
	ph.ledger = strings.TrimSpace(string(out))
	if err != nil {
		ph.ledger = err.Error()
	}
	return ph, nil
}

// answeredRate is the want answers per second: their number over d, or
// over the span from the first of them to the last when that is longer.
func answeredRate(shots []shot, want int, d time.Duration) float64 {
	first, last, n := math.Inf(1), math.Inf(-1), 0
	for _, s := range shots {
		if s.Status == want {
			done := s.At + s.Lat
			first, last, n = min(first, done), max(last, done), n+1
		}
	}
	if n == 0 {
		return 0
	}
	return float64(n) / max(d.Seconds(), (last-first)/1000)
}

// fundWallet puts at least amount in the test wallet: charges (each under
// the per-charge amount guard) paid by the test helper.
func (b *refundBench) fundWallet(p *quitadProc, amount int64) error {
	for left := amount; left > 0; left -= chargeLimit {
		c, st, err := b.post(p.base, "/charges", map[string]any{"amount": min(left, chargeLimit), "payment_method": "pix"}, b.nextKey())
		id, _ := c["id"].(string)
		if err != nil || st != http.StatusCreated || id == "" {
			return fmt.Errorf("fund the wallet: charge: status %d, %v %v", st, err, c)
		}
		if c, st, err = b.post(p.base, "/test_helpers/charges/"+id+"/pay", map[string]any{}, ""); err != nil || st/100 != 2 {
			return fmt.Errorf("fund the wallet: pay %s: status %d, %v %v", id, st, err, c)
		}
	}
	return nil
}

// warmUpPayouts creates payoutWarmup payouts one by one and returns the
// fee the first was charged.
func (b *refundBench) warmUpPayouts(p *quitadProc) (int64, error) {
	var body map[string]any
	_ = json.Unmarshal(payoutBody, &body)
	var fee int64
	for i := range payoutWarmup {
		po, st, err := b.post(p.base, "/payouts", body, b.nextKey())
		if err != nil || st != http.StatusCreated {
			return 0, fmt.Errorf("warm-up payout %d: status %d, %v %v", i, st, err, po)
		}
		if i == 0 {
			f, _ := po["fee"].(float64)
			fee = int64(f)
		}
	}
	return fee, nil
}

// available is the test wallet's available BRL.
func (b *refundBench) available(p *quitadProc) (int64, error) {
	req, _ := http.NewRequest(http.MethodGet, p.base+"/wallets/balance?currency=BRL", nil)
	req.Header.Set("apikey", b.key)
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct{ Available int64 }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("wallet balance: status %d, %v", resp.StatusCode, err)
	}
	return out.Available, nil
}

// payoutStatuses waits (up to wait) until the payout worker has taken
// every pending payout, then counts the payouts by status.
func (b *refundBench) payoutStatuses(wait time.Duration) (map[string]int, error) {
	for deadline := time.Now().Add(wait); ; time.Sleep(200 * time.Millisecond) {
		rows, err := b.db.Query(`SELECT status, count(*) FROM payouts GROUP BY status`)
		if err != nil {
			return nil, err
		}
		by := map[string]int{}
		for rows.Next() {
			var st string
			var n int
			if err := rows.Scan(&st, &n); err != nil {
				rows.Close()
				return nil, err
			}
			by[st] = n
		}
		rows.Close()
		if by["pending"] == 0 || time.Now().After(deadline) {
			return by, rows.Err()
		}
	}
}

// payoutTargets prints the phase and returns the payout target: at least
// 300 payout creates/s on Postgres; the latencies, shed and failed
// requests stand beside it. How many payouts reached paid is reported
// without a target (the sandbox pays a payout only through its test
// helper).
func payoutTargets(ph payoutPhase) []target {
	fmt.Printf("payouts, open loop at %d/s for %s (quitad in its own process, after %d warm-up payouts): %s; 201s %.1f/s\n",
		ph.rate, ph.d, payoutWarmup, ph.load, ph.perSecond)
	fmt.Printf("    payouts by status afterwards: pending %d, processing %d, paid %d, failed %d, cancelled %d; %s\n",
		ph.statuses["pending"], ph.statuses["processing"], ph.statuses["paid"], ph.statuses["failed"], ph.statuses["cancelled"], ph.ledger)
	return []target{{fmt.Sprintf("payout creates/s, %d/s offered", ph.rate), ph.perSecond, "payouts/s", 300, true}}
}

// payoutRows are payoutTargets with the latencies and errors beside the
// figure.
func payoutRows(ph payoutPhase) []row {
	rows := rowsOf(payoutTargets(ph))
	rows[0].ref = fmt.Sprintf("p99 %.0f ms, p99.9 %.0f; %d shed, %d failed of %d",
		pct(ph.load.okLat, 99), pct(ph.load.okLat, 99.9), ph.load.shed, ph.load.failed, ph.load.offered)
	return rows
}

// runPayoutsOnly is `quitabench -payouts-only`: the payout phase and its
// target, without the other benchmarks.
func runPayoutsOnly(pgURL, redisURL string, d time.Duration, rate int, strict bool) error {
	ph, err := runPayoutBench(context.Background(), pgURL, redisURL, d, rate)
	if err != nil {
		return fmt.Errorf("payout benchmark: %w", err)
	}
	return printTable(payoutRows(ph), strict)
}
