package dashboard_test

import (
	"net/http"
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
	for _, p := range []string{"/login", "/test/", "/test/charges", "/test/charges/" + last.ID, "/test/refunds", "/test/webhooks", "/test/keys", "/test/logs"} {
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
