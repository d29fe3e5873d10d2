package dashboard_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/dashboard"
	"github.com/quitapix/quita/quitatest"
)

// Each page, full of data (a page of 25 charges, the timeline of a
// refunded charge, a delivery log), weighs at most 100 KB with the
// stylesheet, script and icon it loads.
func TestPageWeight(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Padaria Pão de Mel com um nome bem comprido para pesar")
	var last apiCharge
	for range 30 {
		last = paidCharge(t, srv, m.TestKey, 123456)
	}
	b := newBrowser(t, srv)
	b.login(m)
	const budget = 100 * 1024
	for _, p := range []string{"/login", "/test/", "/test/charges", "/test/charges/" + last.ID, "/test/subscriptions", "/test/refunds", "/test/webhooks", "/test/keys", "/test/logs",
		"/test/subaccounts", "/test/security"} {
		res := b.get("/dashboard" + p)
		if p == "/login" {
			res = newBrowser(t, srv).get("/dashboard/login")
		}
		if res.Status != http.StatusOK {
			t.Fatalf("%s: %d", p, res.Status)
		}
		total := len(res.Body) + dashboard.AssetWeight()
		t.Logf("%-40s HTML %6d B + assets %d B = %6d B", p, len(res.Body), dashboard.AssetWeight(), total)
		if total > budget {
			t.Errorf("%s weighs %d bytes, budget %d", p, total, budget)
		}
	}
}

// Every page links its assets with a content version; they are served
// immutable with the strict headers and revalidate to 304.
func TestAssets(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	b := newBrowser(t, srv)
	page := b.get("/dashboard/login")
	for _, tt := range []struct{ name, ctype string }{
		{"dashboard.css", "text/css; charset=utf-8"},
		{"dashboard.js", "text/javascript; charset=utf-8"},
		{"icon.svg", "image/svg+xml"},
	} {
		ref := regexp.MustCompile(`/dashboard/static/` + regexp.QuoteMeta(tt.name) + `\?v=[0-9a-f]{12}`).FindString(page.Body)
		if ref == "" {
			t.Errorf("login page does not link %s with a version", tt.name)
			continue
		}
		res := b.get(ref)
		if res.Status != http.StatusOK || res.Header.Get("Content-Type") != tt.ctype || len(res.Body) == 0 ||
			!strings.Contains(res.Header.Get("Cache-Control"), "immutable") || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %v", tt.name, res.Status, res.Header)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+ref, nil)
		req.Header.Set("If-None-Match", res.Header.Get("ETag"))
		if res := b.do(req); res.Status != http.StatusNotModified {
			t.Errorf("%s: revalidation gave %d", tt.name, res.Status)
		}
	}
	if res := b.get("/dashboard/static/nope.js"); res.Status != http.StatusNotFound {
		t.Errorf("unknown asset: %d", res.Status)
	}
	// Pages are never cached and never framed.
	if page.Header.Get("Cache-Control") != "no-store" || page.Header.Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(page.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("page headers %v", page.Header)
	}
}
