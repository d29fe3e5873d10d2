package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
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
		for _, p := range []string{"/", "/charges", "/charges/" + ch.ID, "/subscriptions", "/refunds", "/payouts", "/webhooks", "/keys", "/logs", "/subaccounts", "/security"} {
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
	// Unknown addresses and malformed ids are the dashboard's own 404 page.
	for _, p := range []string{"/dashboard/nope", "/dashboard/test/nope", "/dashboard/test/charges/not-an-id", "/dashboard/live/charges/" + ch.ID} {
		if res := b.get(p); res.Status != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %q", p, res.Status, res.Header.Get("Content-Type"))
		}
	}
	res := b.get("/dashboard/test/charges/" + ch.ID)
	for _, want := range []string{"R$ 1.234,56", "Paga", "Maria da Silva", ch.Pix.TxID} {
		if !strings.Contains(res.Body, want) {
			t.Errorf("charge page lacks %q", want)
		}
	}
}

// The session cookie is HttpOnly and SameSite=Strict, scoped to the
// dashboard, Secure when configured so; the token in it is the API's own
// dashboard token, and logging out ends it for both.
func TestSessionCookieAndLogout(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Cookie")
	b := newBrowser(t, srv)
	// Not logged in: pages go to login and come back after.
	res := b.get("/dashboard/test/keys")
	if res.Status != http.StatusSeeOther || res.Location != "/dashboard/login?next=/dashboard/test/keys" {
		t.Fatalf("anonymous: %d %q", res.Status, res.Location)
	}
	lp := b.get("/dashboard/login?next=/dashboard/test/keys")
	login := b.post("/dashboard/login", url.Values{"csrf": {csrfOf(t, lp.Body)}, "email": {m.Email}, "password": {password},
		"next": {"/dashboard/test/keys"}})
	if login.Status != http.StatusSeeOther || login.Location != "/dashboard/test/keys" {
		t.Fatalf("login: %d %q", login.Status, login.Location)
	}
	var sess *http.Cookie
	for _, c := range (&http.Response{Header: login.Header}).Cookies() {
		if c.Name == "quita_session" {
			sess = c
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/dashboard" || sess.Secure {
		t.Fatalf("session cookie %+v", sess)
	}
	// An open redirect is not possible through next.
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/v1/charges", "/dashboard/../v1/x"} {
		if got := safeNextOf(t, newBrowser(t, srv), m, next); got != "/dashboard/" {
			t.Errorf("next=%q went to %q", next, got)
		}
	}
	// The cookie holds the API's dashboard token: the Bearer flow takes it.
	testkit.Do(t, http.MethodGet, srv.BaseURL+"/api-keys", nil, testkit.Header{"Authorization": "Bearer " + sess.Value}).Want(t, http.StatusOK)

	page := b.get("/dashboard/test/keys")
	out := b.post("/dashboard/logout", url.Values{"csrf": {csrfOf(t, page.Body)}})
	if out.Status != http.StatusSeeOther || out.Location != "/dashboard/login" {
		t.Fatalf("logout: %d %q", out.Status, out.Location)
	}
	// The token is denied everywhere, even replayed by hand.
	testkit.Do(t, http.MethodGet, srv.BaseURL+"/api-keys", nil, testkit.Header{"Authorization": "Bearer " + sess.Value}).Want(t, http.StatusUnauthorized)
	replay := newBrowser(t, srv)
	u, _ := url.Parse(srv.URL + "/dashboard")
	replay.client.Jar.SetCookies(u, []*http.Cookie{{Name: "quita_session", Value: sess.Value, Path: "/dashboard"}})
	if res := replay.get("/dashboard/test/keys"); res.Status != http.StatusSeeOther {
		t.Fatalf("logged-out token still opens pages: %d", res.Status)
	}
}

// safeNextOf logs in with next and returns where the dashboard sent us.
func safeNextOf(t *testing.T, b *browser, m merchant, next string) string {
	t.Helper()
	lp := b.get("/dashboard/login")
	res := b.post("/dashboard/login", url.Values{"csrf": {csrfOf(t, lp.Body)}, "email": {m.Email}, "password": {password}, "next": {next}})
	return res.Location
}

// Forms without the session's CSRF token, with another session's, or
// posted from another origin change nothing.
func TestCSRF(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja CSRF")
	other := newMerchant(t, srv, "Outra Loja")
	b := newBrowser(t, srv)
	b.login(m)
	ob := newBrowser(t, srv)
	ob.login(other)
	otherToken := csrfOf(t, ob.get("/dashboard/test/keys").Body)
	keysBefore := strings.Count(b.get("/dashboard/test/keys").Body, "data-key=")

	for name, form := range map[string]url.Values{
		"no token":            {"label": {"x"}},
		"another session's":   {"label": {"x"}, "csrf": {otherToken}},
		"a made-up token":     {"label": {"x"}, "csrf": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}},
		"login form's cookie": {"label": {"x"}, "csrf": {""}},
	} {
		if res := b.post("/dashboard/test/keys", form); res.Status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, res.Status)
		}
	}
	// The right token from a foreign origin.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dashboard/test/keys",
		strings.NewReader(url.Values{"label": {"x"}, "csrf": {csrfOf(t, b.get("/dashboard/test/keys").Body)}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	if res := b.do(req); res.Status != http.StatusForbidden {
		t.Errorf("foreign origin: %d, want 403", res.Status)
	}
	if n := strings.Count(b.get("/dashboard/test/keys").Body, "data-key="); n != keysBefore {
		t.Fatalf("keys changed from %d to %d", keysBefore, n)
	}
	// The login form needs its own double-submit cookie.
	fresh := newBrowser(t, srv)
	if res := fresh.post("/dashboard/login", url.Values{"csrf": {"x"}, "email": {m.Email}, "password": {password}}); res.Status != http.StatusForbidden {
		t.Errorf("login without the form's cookie: %d", res.Status)
	}
	// And with the right token, it works.
	if res := b.post("/dashboard/test/keys", url.Values{"label": {"ok"}, "csrf": {csrfOf(t, b.get("/dashboard/test/keys").Body)}}); res.Status != http.StatusOK ||
		!strings.Contains(res.Body, "qt_test_") || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("issue with the token: %d", res.Status)
	}
}

// A refund form submitted twice (double click, reload) refunds once; a
// paid charge's receipt downloads as a PDF.
func TestRefundOnceAndReceipt(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Devolução")
	ch := paidCharge(t, srv, m.TestKey, 10000)
	b := newBrowser(t, srv)
	b.login(m)
	detail := "/dashboard/test/charges/" + ch.ID
	pg := b.get(detail)
	idem := regexp.MustCompile(`name="idem" value="([^"]+)"`).FindStringSubmatch(pg.Body)
	if idem == nil {
		t.Fatal("no idempotency key in the refund form")
	}
	form := url.Values{"csrf": {csrfOf(t, pg.Body)}, "idem": {idem[1]}, "amount": {"25,00"}}
	for range 2 {
		if res := b.post(detail+"/refund", form); res.Status != http.StatusSeeOther || res.Location != detail+"?done=refunded" {
			t.Fatalf("refund: %d %q", res.Status, res.Location)
		}
	}
	if res := b.post(detail+"/refund", url.Values{"csrf": form["csrf"], "idem": {"another"}, "amount": {"200,00"}}); res.Location != detail+"?err=refund_exceeds" {
		t.Errorf("too much: %q", res.Location)
	}
	if res := b.post(detail+"/refund", url.Values{"csrf": form["csrf"], "idem": {"again"}, "amount": {"dez reais"}}); res.Location != detail+"?err=refund_amount" {
		t.Errorf("garbage amount: %q", res.Location)
	}
	// A reason with a bidirectional override is refused; nothing is refunded.
	if res := b.post(detail+"/refund", url.Values{"csrf": form["csrf"], "idem": {"bidi"}, "amount": {"1,00"}, "reason": {"esgotado\u202e"}}); res.Location != detail+"?err=refund_reason_chars" {
		t.Errorf("reason with a bidi override: %q", res.Location)
	} else if page := b.get(res.Location); !strings.Contains(page.Body, "O motivo não pode ter caracteres de controle") {
		t.Errorf("the charge page does not say why")
	}
	refunds := b.get("/dashboard/test/refunds")
	if n := strings.Count(refunds.Body, "R$ 25,00"); n != 1 {
		t.Fatalf("refunds page lists %d refunds of R$ 25,00, want 1", n)
	}
	res := b.get(detail + "/receipt")
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(res.Body, "%PDF") ||
		!strings.Contains(res.Header.Get("Content-Disposition"), "attachment; filename=") {
		t.Errorf("receipt: %d %q %.8q", res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	// Once the refund is confirmed, its own receipt is linked from the page.
	for range 5 {
		if _, err := srv.App.Payments.AdvanceRefunds(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	link := regexp.MustCompile(`href="(/dashboard/test/charges/[^"]+/refunds/re_[a-z2-7]+/receipt)"`).FindStringSubmatch(b.get(detail).Body)
	if link == nil {
		t.Fatal("no refund receipt link on the charge page once refunded")
	}
	if res := b.get(link[1]); res.Status != http.StatusOK || !strings.HasPrefix(res.Body, "%PDF") {
		t.Errorf("refund receipt: %d", res.Status)
	}
	// An unpaid charge has none.
	open := apiCall(t, srv, http.MethodPost, "/charges", m.TestKey, map[string]any{"amount": 500, "payment_method": "pix"}, http.StatusCreated)
	if res := b.get("/dashboard/test/charges/" + open.ID + "/receipt"); res.Status != http.StatusUnprocessableEntity {
		t.Errorf("receipt of an open charge: %d", res.Status)
	}
}

// Payouts made through the API are listed in their mode; a pending one
// is cancelled from the page, once.
func TestPayoutsPage(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Saque")
	paidCharge(t, srv, m.TestKey, 50000)
	po := apiCall(t, srv, http.MethodPost, "/payouts", m.TestKey, map[string]any{"amount": 12345,
		"destination": map[string]any{"pix_key": "financeiro@loja.example.com"}}, http.StatusCreated)
	b := newBrowser(t, srv)
	b.login(m)
	pg := b.get("/dashboard/test/payouts")
	if pg.Status != http.StatusOK || !strings.Contains(pg.Body, `data-payout="`+po.ID+`"`) || !strings.Contains(pg.Body, "R$ 123,45") ||
		strings.Contains(pg.Body, "financeiro@loja.example.com") {
		t.Fatalf("payouts page: %d (listed, amount, key masked?)\n%.3000s", pg.Status, pg.Body)
	}
	if live := b.get("/dashboard/live/payouts"); strings.Contains(live.Body, po.ID) {
		t.Error("live mode lists the test payout")
	}
	form := url.Values{"csrf": {csrfOf(t, pg.Body)}}
	if res := b.post("/dashboard/test/payouts/"+po.ID+"/cancel", form); res.Location != "/dashboard/test/payouts?done=payout_cancelled" {
		t.Fatalf("cancel: %d %q", res.Status, res.Location)
	}
	if res := b.post("/dashboard/test/payouts/"+po.ID+"/cancel", form); res.Location != "/dashboard/test/payouts?err=payout_not_cancellable" {
		t.Errorf("second cancel: %d %q", res.Status, res.Location)
	}
	got := apiCall(t, srv, http.MethodGet, "/payouts/"+po.ID, m.TestKey, nil, http.StatusOK)
	if got.Status != "cancelled" {
		t.Errorf("payout after cancel: %s", got.Status)
	}
}

// The charge page and the refunds page say where each refund's money
// went: a cashout's key masked (never in clear) with the Pix-out fee it
// bore, and a devolution as a return to the payer.
func TestRefundListsShowTheDestination(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Destino")
	if err := srv.App.Payments.SetAccountFee(t.Context(), m.AccountID, domain.FeeKeyPixOut,
		domain.FeeSchedule{Platform: domain.Fee{Fixed: 50}}); err != nil {
		t.Fatal(err)
	}
	ch := paidCharge(t, srv, m.TestKey, 10000)
	refund := func(body map[string]any) {
		t.Helper()
		body["idempotencyKey"] = fmt.Sprintf("dashboard-refund-%08d", idemSeq.Add(1))
		testkit.Do(t, http.MethodPost, srv.BaseURL+"/payments/"+ch.ID+"/refund", body, testkit.Header{"apikey": m.TestKey}).
			Want(t, http.StatusCreated)
	}
	refund(map[string]any{"amount": 1000, "strategy": "cashout", "destinationKey": "maria.silva@example.com", "passFeeToTenant": true})
	refund(map[string]any{"amount": 700, "strategy": "devolution"})
	b := newBrowser(t, srv)
	b.login(m)
	for _, page := range []string{"/dashboard/test/charges/" + ch.ID, "/dashboard/test/refunds"} {
		body := b.get(page).Body
		for _, want := range []string{"Pix para a chave m***@example.com (e-mail) · tarifa R$ 0,50", "devolução do Pix original ao pagador"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", page, want)
			}
		}
		if strings.Contains(body, "maria.silva") {
			t.Errorf("%s shows the destination key in clear", page)
		}
	}
}

// "Sair de todos os dispositivos" ends the session it is pressed in and
// the user's other sessions (another browser, an API bearer token).
func TestLogoutEverywhere(t *testing.T) {
	t.Parallel()
	clock := quitatest.NewClock()
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock})
	m := newMerchant(t, srv, "Loja Todos os Dispositivos")
	here, there := newBrowser(t, srv), newBrowser(t, srv)
	for _, b := range []*browser{here, there} {
		lp := b.get("/dashboard/login")
		if res := b.post("/dashboard/login", url.Values{"csrf": {csrfOf(t, lp.Body)}, "email": {m.Email}, "password": {password}}); res.Status != http.StatusSeeOther {
			t.Fatalf("login: %d", res.Status)
		}
	}
	page := here.get("/dashboard/test/keys")
	if !strings.Contains(string(page.Body), `action="/dashboard/logout-all"`) {
		t.Fatal("no log-out-everywhere form on the page")
	}
	out := here.post("/dashboard/logout-all", url.Values{"csrf": {csrfOf(t, page.Body)}})
	if out.Status != http.StatusSeeOther || out.Location != "/dashboard/login" {
		t.Fatalf("logout-all: %d %q", out.Status, out.Location)
	}
	for name, b := range map[string]*browser{"this browser": here, "the other browser": there} {
		if res := b.get("/dashboard/test/keys"); res.Status != http.StatusSeeOther {
			t.Errorf("%s still opens pages: %d", name, res.Status)
		}
	}
}
