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
	for _, p := range []string{"/test/", "/test/charges", "/test/charges/" + last.ID, "/test/refunds", "/test/webhooks", "/test/keys", "/test/logs", "/test/security"} {
		req := httptest.NewRequest(http.MethodGet, "/dashboard"+p, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		reqs = append(reqs, req)
	}
	times := make([]time.Duration, 0, 4096)
	perPage := make([][]time.Duration, len(reqs))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		n := i % len(reqs)
		req := reqs[n]
		i++
		rec := httptest.NewRecorder()
		start := time.Now()
		srv.App.Handler.ServeHTTP(rec, req)
		took := time.Since(start)
		times = append(times, took)
		perPage[n] = append(perPage[n], took)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d", req.URL.Path, rec.Code)
		}
	}
	pct := func(ts []time.Duration, p int) float64 {
		slices.Sort(ts)
		return float64(ts[(len(ts)-1)*p/100].Microseconds()) / 1000
	}
	b.ReportMetric(pct(times, 50), "p50-ms")
	b.ReportMetric(pct(times, 99), "p99-ms")
	for n, ts := range perPage {
		if len(ts) > 0 {
			b.Logf("%-60s p50 %.2f ms  p99 %.2f ms", reqs[n].URL.Path, pct(ts, 50), pct(ts, 99))
		}
	}
}

// BenchmarkSubaccountPages measures the Subcontas list (a page of 25
// sellers, each with its wallet read) and a seller's page (wallet,
// charges, transfers, invitations) for a platform with 30 sellers, each
// credited by a split charge (target: p99 ≤ 20 ms, as every page).
func BenchmarkSubaccountPages(b *testing.B) {
	srv := quitatest.NewServer(b, quitatest.Options{})
	m := newMerchant(b, srv, "Plataforma Delivery")
	var sellers []apiSubaccount
	for i := range 30 {
		sellers = append(sellers, newSeller(b, srv, m.TestKey, "Vendedor "+formatN(i), sellerCNPJ))
	}
	for i := 0; i+1 < len(sellers); i += 2 {
		splitCharge(b, srv, m.TestKey, sellers[i].ID, sellers[i+1].ID, true)
	}
	invite(b, srv, m.TestKey, sellers[0].ID, "vendedor@example.com")
	br := newBrowser(b, srv)
	br.login(m)
	u, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard/", nil)
	cookies := br.client.Jar.Cookies(u.URL)
	var reqs []*http.Request
	for _, p := range []string{"/test/subaccounts", "/test/subaccounts/" + sellers[0].ID} {
		req := httptest.NewRequest(http.MethodGet, "/dashboard"+p, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		reqs = append(reqs, req)
	}
	perPage := make([][]time.Duration, len(reqs))
	i := 0
	for b.Loop() {
		n := i % len(reqs)
		i++
		rec := httptest.NewRecorder()
		start := time.Now()
		srv.App.Handler.ServeHTTP(rec, reqs[n])
		perPage[n] = append(perPage[n], time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d", reqs[n].URL.Path, rec.Code)
		}
	}
	for n, ts := range perPage {
		if len(ts) == 0 {
			continue
		}
		slices.Sort(ts)
		p99 := float64(ts[(len(ts)-1)*99/100].Microseconds()) / 1000
		b.Logf("%-60s p50 %.2f ms  p99 %.2f ms", reqs[n].URL.Path, float64(ts[(len(ts)-1)/2].Microseconds())/1000, p99)
		b.ReportMetric(p99, "p99-ms-"+[]string{"list", "detail"}[n])
	}
}

func formatN(i int) string { return string(rune('A'+i/10)) + string(rune('0'+i%10)) }
