package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/quitapix/quita/quitatest"
)

// BenchmarkDashboardPages measures the server time of each dashboard page
// through the whole quitad handler (routing, request log, session check,
// the app reads on SQLite, template) without the network, for an account
// with 30 paid charges. It reports p50/p99 over all pages (target: p99 ≤
// 20 ms).
func BenchmarkDashboardPages(b *testing.B) {
	srv := quitatest.NewServer(b, quitatest.Options{})
	m := newMerchant(b, srv, "Padaria Pão de Mel")
	var last apiCharge
	for range 30 {
		last = paidCharge(b, srv, m.TestKey, 123456)
	}
	br := newBrowser(b, srv)
	br.login(m)
	u, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard/", nil)
	cookies := br.client.Jar.Cookies(u.URL)
	var reqs []*http.Request
	for _, p := range []string{"/test/", "/test/charges", "/test/charges/" + last.ID, "/test/refunds", "/test/webhooks", "/test/keys", "/test/logs"} {
		req := httptest.NewRequest(http.MethodGet, "/dashboard"+p, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		reqs = append(reqs, req)
	}
	times := make([]time.Duration, 0, 4096)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := reqs[i%len(reqs)]
		i++
		rec := httptest.NewRecorder()
		start := time.Now()
		srv.App.Handler.ServeHTTP(rec, req)
		times = append(times, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d", req.URL.Path, rec.Code)
		}
	}
	slices.Sort(times)
	pct := func(p int) float64 {
		return float64(times[(len(times)-1)*p/100].Microseconds()) / 1000
	}
	b.ReportMetric(pct(50), "p50-ms")
	b.ReportMetric(pct(99), "p99-ms")
}
