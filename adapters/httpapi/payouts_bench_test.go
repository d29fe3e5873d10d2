package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// BenchmarkPayoutCreate measures POST /v1/payouts through HTTP on
// Postgres, 32 clients at once against one merchant's wallet (the hot row
// every create updates). Target: ≥ 300 payouts/s. It reports
// payouts/s and the p99 in ms; the ledger must verify afterwards.
func BenchmarkPayoutCreate(b *testing.B) {
	e := newPayEnv(b, testenv.PostgresDSN(b))
	ctx := context.Background()
	err := e.srv.App.Dashboard.GuardSettings.Set(ctx, e.acct.AccountID,
		ports.AccountSettings{RateLimitPerSecond: 1_000_000, RateLimitBurst: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	for range (b.N*100)/900_000 + 1 { // 100 centavos a payout, R$ 9,000 a charge
		e.fundPayouts(910_000)
	}
	const workers = 32
	var (
		next, failed atomic.Int64
		wg           sync.WaitGroup
		mu           sync.Mutex
		ds           []time.Duration
	)
	n := int64(b.N)
	b.ResetTimer()
	start := time.Now()
	for range workers {
		wg.Go(func() {
			var mine []time.Duration
			for {
				i := next.Add(1)
				if i > n {
					break
				}
				t0 := time.Now()
				r := e.postPayout(e.acct.TestKey, fmt.Sprintf("bench-payout-%d-%d", n, i), map[string]any{"amount": 100,
					"destination": map[string]any{"pix_key": "52998224725"}})
				mine = append(mine, time.Since(t0))
				if r.Status != 201 && failed.Add(1) == 1 {
					b.Logf("payout %d: %d %s", i, r.Status, r.Raw)
				}
			}
			mu.Lock()
			ds = append(ds, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d payouts failed", failed.Load())
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "payouts/s")
	b.ReportMetric(float64(percentile(ds, 0.99).Microseconds())/1000, "p99-ms")
	e.verifyLedger()
}
