package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/quitatest"
)

// Every page renders for a logged-in merchant, in both modes and both
// languages, with the strict headers.
func TestEveryPageRenders(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Padaria São João")
	ch := paidCharge(t, srv, m.TestKey, 123456)
	b := newBrowser(t, srv)
	if got := b.login(m).Location; got != "/dashboard/" {
		t.Fatalf("login went to %q", got)
	}
	for _, mode := range []string{"live", "test"} {
		for _, p := range []string{"/", "/charges", "/charges/" + ch.ID, "/refunds", "/webhooks", "/keys", "/logs"} {
			if mode == "live" && strings.HasPrefix(p, "/charges/") {
				continue
			}
			res := b.get("/dashboard/" + mode + p)
			if res.Status != http.StatusOK {
				t.Errorf("%s%s: %d\n%.3000s", mode, p, res.Status, res.Body)
				continue
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
				t.Errorf("%s%s: CSP %q", mode, p, csp)
			}
			if !strings.Contains(res.Body, `lang="pt-BR"`) || !strings.Contains(res.Body, "Padaria São João") {
				t.Errorf("%s%s: not the pt-BR page of the account", mode, p)
			}
		}
	}
	res := b.get("/dashboard/test/charges/" + ch.ID)
	for _, want := range []string{"R$ 1.234,56", "Paga", "Maria da Silva", ch.Pix.TxID} {
		if !strings.Contains(res.Body, want) {
			t.Errorf("charge page lacks %q", want)
		}
	}
}
