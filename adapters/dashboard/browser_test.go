package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// The merchant's whole journey in a real browser: log in, switch to test
// mode, create an API key and see it once, register a webhook endpoint,
// create and pay a test charge through the API with that key, find it in
// the list and by its txid, refund part of it from its page, watch the
// webhook delivery arrive and resend it, read the refunds and request
// logs, switch back to live mode (where none of it shows) and log out.
// Every page is screenshotted into artifacts/dashboard/.
func TestBrowserMerchantJourney(t *testing.T) {
	t.Parallel()
	var received atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	srv := quitatest.NewServer(t, quitatest.Options{DeliverWebhooks: true})
	m := newMerchant(t, srv, "Padaria São João")
	// Some live history, so the live overview is not empty.
	ctx, console := browserTab(t)

	// Not logged in: the dashboard sends us to the login page.
	do(t, ctx, "open the dashboard", chromedp.Navigate(srv.URL+"/dashboard/"), chromedp.WaitVisible(chromedp.ID("email")))
	if loc := location(t, ctx); !strings.Contains(loc, "/dashboard/login") {
		t.Fatalf("not sent to login: %s", loc)
	}
	screenshot(t, ctx, "01-login")
	// A wrong password is refused on the page.
	do(t, ctx, "wrong password", chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("password"), "not-the-password"),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("login-error")))
	console.reset() // the refused login's 401
	do(t, ctx, "log in", chromedp.SetValue(chromedp.ID("password"), password), chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("balance-available")))
	if got := evalString(t, ctx, `document.querySelector('h1').textContent`); got != "Visão geral" {
		t.Errorf("overview title %q", got)
	}
	screenshot(t, ctx, "02-overview-live")
	// Keyboard users meet the skip link first, and it leads to the content.
	do(t, ctx, "tab", chromedp.KeyEvent("\t"))
	if got := evalString(t, ctx, `document.activeElement.className + ' ' + document.activeElement.getAttribute('href')`); got != "skip #main" {
		t.Errorf("first Tab stop: %q", got)
	}

	// Test mode.
	do(t, ctx, "switch to test mode", chromedp.Click(chromedp.ID("mode-switch")), chromedp.WaitVisible(chromedp.CSS(".test-banner")))
	if loc := location(t, ctx); !strings.HasSuffix(loc, "/dashboard/test/") {
		t.Errorf("test mode at %s", loc)
	}

	// An API key, shown once.
	do(t, ctx, "keys page", chromedp.Click(chromedp.CSS(`nav.side a[href$="/keys"]`)), chromedp.WaitVisible(chromedp.ID("key-form")))
	do(t, ctx, "issue a key", chromedp.SendKeys(chromedp.ID("label"), "Servidor da loja"), chromedp.Click(chromedp.ID("key-submit")),
		chromedp.WaitVisible(chromedp.ID("secret-value")))
	key, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("secret-value")))
	if err != nil || !strings.HasPrefix(key, "qt_test_") {
		t.Fatalf("key shown: %q %v", key, err)
	}
	screenshot(t, ctx, "03-key-shown-once")
	do(t, ctx, "back to keys", chromedp.Click(chromedp.ID("secret-done")), chromedp.WaitVisible(chromedp.ID("keys-table")))
	if html := evalString(t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, key) {
		t.Fatal("the keys page shows the cleartext again")
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll('#keys-table tbody tr').length)`); n != "2" {
		t.Errorf("test keys listed: %s, want 2 (the account's first and the new one)", n)
	}
	screenshot(t, ctx, "04-keys")

	// A webhook endpoint; its secret is shown once too.
	do(t, ctx, "webhooks page", chromedp.Click(chromedp.CSS(`nav.side a[href$="/webhooks"]`)), chromedp.WaitVisible(chromedp.ID("endpoint-form")))
	do(t, ctx, "register an endpoint", chromedp.SendKeys(chromedp.ID("url"), hook.URL+"/quita"), chromedp.Click(chromedp.ID("endpoint-submit")),
		chromedp.WaitVisible(chromedp.ID("secret-value")))
	if s, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("secret-value"))); len(s) < 32 {
		t.Errorf("webhook secret %q", s)
	}
	screenshot(t, ctx, "05-webhook-secret")
	do(t, ctx, "back to webhooks", chromedp.Click(chromedp.ID("secret-done")), chromedp.WaitVisible(chromedp.ID("endpoints")))

	// A test charge created and paid through the API with the new key.
	ch := paidCharge(t, srv, key, 123456)
	do(t, ctx, "charges page", chromedp.Click(chromedp.CSS(`nav.side a[href$="/charges"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+ch.ID+`"]`)))
	if got := evalString(t, ctx, `document.querySelector('tr[data-id="`+ch.ID+`"] td.num').textContent.trim()`); got != "R$ 1.234,56" {
		t.Errorf("amount in the list %q", got)
	}
	screenshot(t, ctx, "06-charges")
	// Filter by status, then search by txid: straight to the charge.
	do(t, ctx, "filter paid", chromedp.SetValue(chromedp.ID("status"), "PAID"), chromedp.Submit(chromedp.ID("status")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+ch.ID+`"]`)))
	do(t, ctx, "search by txid", chromedp.SendKeys(chromedp.ID("q"), ch.Pix.TxID), chromedp.Submit(chromedp.ID("q")),
		chromedp.WaitVisible(chromedp.ID("charge-amount")))
	if got := evalString(t, ctx, `document.getElementById('charge-id').textContent`); got != ch.ID {
		t.Fatalf("search by txid opened %q, want %s", got, ch.ID)
	}
	screenshot(t, ctx, "07-charge")

	// Refund part of it from its page (the confirmation is accepted).
	do(t, ctx, "refund", chromedp.SetValue(chromedp.ID("amount"), "234,56"), chromedp.Click(chromedp.ID("refund-submit")),
		chromedp.WaitVisible(chromedp.ID("charge-refunds")))
	if got := evalString(t, ctx, `document.querySelector('.notice.ok').textContent`); got != "Devolução solicitada." {
		t.Errorf("refund notice %q", got)
	}
	if got := evalString(t, ctx, `document.getElementById('charge-refunds').textContent`); !strings.Contains(got, "R$ 234,56") {
		t.Errorf("refunds on the charge: %q", got)
	}
	if d := console.confirmed(); len(d) != 1 || !strings.Contains(d[0], "Devolver") {
		t.Errorf("confirmations: %q", d)
	}
	screenshot(t, ctx, "08-charge-refunded")

	// The webhook deliveries arrive; the log shows them and resends one.
	deadline := time.Now().Add(20 * time.Second)
	for received.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if received.Load() == 0 {
		t.Fatal("the endpoint received nothing")
	}
	do(t, ctx, "webhooks log", chromedp.Navigate(srv.URL+"/dashboard/test/webhooks"),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries-table .badge.ok`)))
	screenshot(t, ctx, "09-webhooks")
	before := received.Load()
	do(t, ctx, "resend", chromedp.Click(chromedp.CSS(`#deliveries-table tr:has(.badge.ok) button`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice.ok`)))
	deadline = time.Now().Add(20 * time.Second)
	for received.Load() == before && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if received.Load() == before {
		t.Error("the resent delivery never arrived")
	}
	// The charge's timeline shows its events with their deliveries.
	do(t, ctx, "timeline", chromedp.Navigate(srv.URL+"/dashboard/test/charges/"+ch.ID), chromedp.WaitVisible(chromedp.CSS(`#timeline .delivery`)))

	do(t, ctx, "refunds page", chromedp.Click(chromedp.CSS(`nav.side a[href$="/refunds"]`)), chromedp.WaitVisible(chromedp.ID("refunds-table")))
	screenshot(t, ctx, "10-refunds")
	po := apiCall(t, srv, http.MethodPost, "/payouts", key, map[string]any{"amount": 50000,
		"destination": map[string]any{"pix_key": "financeiro@padaria.example.com"}}, http.StatusCreated)
	do(t, ctx, "payouts page", chromedp.Click(chromedp.CSS(`nav.side a[href$="/payouts"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-payout="`+po.ID+`"]`)))
	screenshot(t, ctx, "10-payouts")
	do(t, ctx, "logs page", chromedp.Click(chromedp.CSS(`nav.side a[href$="/logs"]`)), chromedp.WaitVisible(chromedp.ID("logs-table")))
	if got := evalString(t, ctx, `document.getElementById('logs-table').textContent`); !strings.Contains(got, "/v1/charges") {
		t.Errorf("request logs lack the API calls: %q", got)
	}
	screenshot(t, ctx, "11-logs")
	do(t, ctx, "test overview", chromedp.Click(chromedp.CSS(`nav.side a[href$="/test/"]`)), chromedp.WaitVisible(chromedp.ID("today-volume")))
	if got := evalString(t, ctx, `document.getElementById('today-volume').textContent`); got != "R$ 1.234,56" {
		t.Errorf("today's test volume %q", got)
	}
	screenshot(t, ctx, "12-overview-test")

	// English.
	do(t, ctx, "English", chromedp.Click(chromedp.CSS(`a[lang="en"]`)), chromedp.WaitVisible(chromedp.ID("today-volume")))
	if got := evalString(t, ctx, `document.documentElement.lang + ' ' + document.querySelector('h1').textContent`); got != "en Overview" {
		t.Errorf("English page: %q", got)
	}
	screenshot(t, ctx, "13-overview-test-en")
	do(t, ctx, "Português", chromedp.Click(chromedp.CSS(`a[lang="pt-BR"]`)), chromedp.WaitVisible(chromedp.ID("today-volume")))

	// Back to live mode on the charges page: none of the test data shows.
	do(t, ctx, "charges", chromedp.Click(chromedp.CSS(`nav.side a[href$="/charges"]`)), chromedp.WaitVisible(chromedp.ID("q")))
	do(t, ctx, "switch to live", chromedp.Click(chromedp.ID("mode-switch")), chromedp.WaitNotPresent(chromedp.CSS(".test-banner")))
	if loc := location(t, ctx); !strings.HasSuffix(loc, "/dashboard/live/charges") {
		t.Errorf("live mode at %s", loc)
	}
	if html := evalString(t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, ch.ID) {
		t.Error("live mode lists the test charge")
	}
	screenshot(t, ctx, "14-charges-live")
	// On a phone the navigation folds above the page.
	do(t, ctx, "phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/dashboard/test/charges"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+ch.ID+`"]`)))
	screenshot(t, ctx, "15-charges-phone")
	do(t, ctx, "desktop", chromedp.EmulateViewport(1366, 900))

	// Log out: the session is over, on this browser and for the token.
	do(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("email")))
	do(t, ctx, "after logout", chromedp.Navigate(srv.URL+"/dashboard/test/charges"), chromedp.WaitVisible(chromedp.ID("email")))
	screenshot(t, ctx, "16-logged-out")
	console.check(t)

	// The API's own flow is untouched: the key still works.
	testkit.Do(t, http.MethodGet, srv.BaseURL+"/charges/"+ch.ID, nil, testkit.Header{"apikey": key}).Want(t, http.StatusOK)
}
