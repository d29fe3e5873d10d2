package checkout_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/checkout"
	"github.com/quitapix/quita/quitatest"
)

// BenchmarkCheckoutPage measures the server time of one checkout page: the
// whole quitad handler (routing, request log, charge and account reads on
// SQLite, template) without the network. It reports the p50/p99 per page
// (target: p99 ≤ 20 ms) and the page weight, HTML + CSS + JS (budget
// 50 KB).
func BenchmarkCheckoutPage(b *testing.B) {
	srv := quitatest.NewServer(b, quitatest.Options{})
	acct := srv.NewAccount(b, "Padaria Pão de Mel")
	ch := createCharge(b, srv, acct.TestKey, map[string]any{
		"amount": 123456, "payment_method": "pix", "description": "Encomenda de bolo",
	})
	req := httptest.NewRequest(http.MethodGet, ch.CheckoutURL, nil)
	req.Header.Set("Accept-Language", "pt-BR,pt;q=0.9")

	var htmlBytes int
	times := make([]time.Duration, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		start := time.Now()
		srv.App.Handler.ServeHTTP(rec, req)
		times = append(times, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("page: %d", rec.Code)
		}
		htmlBytes = rec.Body.Len()
	}
	slices.Sort(times)
	pct := func(p int) float64 {
		return float64(times[(len(times)-1)*p/100].Microseconds()) / 1000
	}
	b.ReportMetric(pct(50), "p50-ms")
	b.ReportMetric(pct(99), "p99-ms")
	b.ReportMetric(float64(htmlBytes+checkout.PageWeight()), "page-bytes")
}
