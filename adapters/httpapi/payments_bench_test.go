package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// benchTransactions is the size of the account the payments benchmarks
// read: the target is 200,000 transactions on Postgres.
const benchTransactions = 200_000

// seedPayments bulk-inserts n charges for the account in test mode, spread
// over the last 60 days: 70 % PAID by Pix, the rest expired, cancelled or
// waiting. It also funds the wallet so refunds can be created.
func seedPayments(b *testing.B, e *payEnv, n int) {
	b.Helper()
	db := e.srv.App.DB.Bun()
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `
INSERT INTO charges (id, account_id, mode, amount, currency, methods, status, metadata, expires_at, created_at, updated_at,
    settlement_amount, settlement_paid_at, settlement_paid_with, settlement_end_to_end_id, fee_provider, fee_platform,
    provider, provider_ref, pix_br_code, pix_txid, pix_location, pix_expires_at)
SELECT 'bb' || translate(lpad(g::text, 24, '0'), '0123456789', 'abcdefghij'), ?, 'test',
    1000 + (g % 50000), 'BRL', '["PIX"]'::jsonb,
    CASE WHEN g % 10 < 7 THEN 'PAID' WHEN g % 10 = 7 THEN 'EXPIRED' WHEN g % 10 = 8 THEN 'CANCELLED' ELSE 'WAITING_PAYMENT' END,
    '{}'::jsonb, c + interval '1 hour', c, c,
    CASE WHEN g % 10 < 7 THEN 1000 + (g % 50000) END,
    CASE WHEN g % 10 < 7 THEN c + make_interval(secs => 30 + g % 600) END,
    CASE WHEN g % 10 < 7 THEN 'PIX' END,
    CASE WHEN g % 10 < 7 THEN 'E99999999202611010000' || lpad(g::text, 11, '0') END,
    CASE WHEN g % 10 < 7 THEN ((1000 + (g % 50000)) * 50 + 5000) / 10000 ELSE 0 END,
    CASE WHEN g % 10 < 7 THEN ((1000 + (g % 50000)) * 49 + 5000) / 10000 ELSE 0 END,
    'sandbox', 'ref' || g, '000201', 'tx' || g, 'pix.example.com/' || g, c + interval '1 hour'
FROM (SELECT g, now() - make_interval(secs => g * 25.92) AS c FROM generate_series(1, ?) AS g) s`,
		e.acct.AccountID, n)
	if err != nil {
		b.Fatalf("seed charges: %v", err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO wallet_balances (account_id, mode, currency, available, pending, updated_at)
VALUES (?, 'test', 'BRL', 1000000000000, 0, now())`, e.acct.AccountID)
	if err != nil {
		b.Fatalf("seed wallet: %v", err)
	}
	// The seed bypasses the store, so it fills the status counters and the
	// per-day totals as the migrations do for existing rows.
	_, err = db.ExecContext(ctx, `INSERT INTO charge_counts (account_id, mode, status, shard, n)
SELECT account_id, mode, status, 0, COUNT(*) FROM charges WHERE account_id = ? GROUP BY account_id, mode, status
ON CONFLICT (account_id, mode, status, shard) DO UPDATE SET n = charge_counts.n + EXCLUDED.n`, e.acct.AccountID)
	if err != nil {
		b.Fatalf("seed counts: %v", err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO charge_day_totals (account_id, mode, day, currency, status, paid_with, shard, n, volume, refunded)
SELECT account_id, mode, CAST(CAST(created_at AT TIME ZONE 'UTC' AS date) AS text), currency, status,
    COALESCE(settlement_paid_with, ''), 0, COUNT(*), SUM(amount), SUM(refund_completed)
FROM charges WHERE account_id = ? GROUP BY 1, 2, 3, 4, 5, 6
ON CONFLICT (account_id, mode, day, currency, status, paid_with, shard) DO UPDATE
SET n = charge_day_totals.n + EXCLUDED.n, volume = charge_day_totals.volume + EXCLUDED.volume,
    refunded = charge_day_totals.refunded + EXCLUDED.refunded`, e.acct.AccountID)
	if err != nil {
		b.Fatalf("seed day totals: %v", err)
	}
	// What autovacuum would have done by the time an account has 200,000
	// transactions: statistics and the visibility map.
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE charges"); err != nil {
		b.Fatal(err)
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

// BenchmarkPayments200k measures the payments surface through HTTP on an
// account with 200,000 transactions on Postgres. Targets: list
// page p99 ≤ 20 ms; stats and metrics for 30 days ≤ 150 ms; refund create
// ≥ 300/s. Each sub-benchmark reports p50/p99 in ms (refunds: refunds/s).
func BenchmarkPayments200k(b *testing.B) {
	e := newPayEnv(b, testenv.PostgresDSN(b))
	seedPayments(b, e, benchTransactions)
	// Measure the service, not the per-key rate limit.
	err := e.srv.App.Dashboard.GuardSettings.Set(context.Background(), e.acct.AccountID,
		ports.AccountSettings{RateLimitPerSecond: 1_000_000, RateLimitBurst: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	latency := func(b *testing.B, path string) {
		var ds []time.Duration
		for b.Loop() {
			start := time.Now()
			r := e.call("GET", path, e.acct.TestKey, nil)
			ds = append(ds, time.Since(start))
			if r.Status != 200 {
				b.Fatalf("%s: %d %s", path, r.Status, r.Raw)
			}
		}
		b.ReportMetric(float64(percentile(ds, 0.50).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(percentile(ds, 0.99).Microseconds())/1000, "p99-ms")
	}
	b.Run("list-page", func(b *testing.B) { latency(b, "/payments?limit=20") })
	b.Run("list-page-status", func(b *testing.B) { latency(b, "/payments?limit=20&page=50&status=PAID") })
	b.Run("stats-30d", func(b *testing.B) { latency(b, "/payments/stats?days=30") })
	b.Run("metrics-30d", func(b *testing.B) { latency(b, "/payments/metrics?days=30") })
	b.Run("refund-create", func(b *testing.B) {
		// Distinct paid charges (g % 10 < 7), refunded concurrently.
		const workers = 32
		var next atomic.Int64
		var failed atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		n := int64(b.N)
		for range workers {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > n {
						return
					}
					g := (i/7)*10 + i%7 + 10 // a PAID row
					id := "bb" + letters(fmt.Sprintf("%024d", g))
					r := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": fmt.Sprintf("bench-refund-%d", i), "amount": 100})
					if r.Status != 201 && failed.Add(1) == 1 {
						b.Logf("refund %s: %d %s", id, r.Status, r.Raw)
					}
				}
			})
		}
		wg.Wait()
		el := time.Since(start)
		if failed.Load() > 0 {
			b.Fatalf("%d refunds failed", failed.Load())
		}
		b.ReportMetric(float64(b.N)/el.Seconds(), "refunds/s")
	})
}

func letters(d string) string {
	out := []byte(d)
	for i, c := range out {
		out[i] = 'a' + (c - '0')
	}
	return string(out)
}
