package bcbpix_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// Callbacks are dropped or duplicated by the PSP: these change the
// simulator's callback mode, so they get a world of their own.
func TestQuitadWithPixsimCallbackFaults(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testQuitadWithPixsimCallbackFaults(t, newWorld(t, b.dsn(t)))
		})
	}
}

func testQuitadWithPixsimCallbackFaults(t *testing.T, w *world) {
	ctx := context.Background()

	t.Run("dropped callback settles by reconciliation", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDrop)
		defer w.sim.SetCallbacks(pixsim.CallbacksNormal)
		c := w.create(t, map[string]any{"amount": 2500, "payment_method": "pix"})
		w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Fatalf("before reconciliation: %s", got.Status)
		}
		n, err := w.app.PixReceipts.Reconcile(ctx)
		if err != nil || n != 1 {
			t.Fatalf("reconcile applied %d, %v; want 1", n, err)
		}
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Fatalf("after reconciliation: %s", got.Status)
		}
		if n, err := w.app.PixReceipts.Reconcile(ctx); err != nil || n != 0 {
			t.Errorf("second reconciliation applied %d, %v; want 0", n, err)
		}
		if n := w.events(t, c.ID, domain.EventChargePaid); n != 1 {
			t.Errorf("%d charge.paid events, want 1", n)
		}
	})

	t.Run("duplicated callback settles once", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDuplicate)
		defer w.sim.SetCallbacks(pixsim.CallbacksNormal)
		c := w.create(t, map[string]any{"amount": 3300, "payment_method": "pix"})
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		delivered := 0
		for _, cb := range w.sim.Callbacks() {
			if len(cb.E2EIDs) == 1 && cb.E2EIDs[0] == p.EndToEndID {
				delivered++
				if cb.Status != http.StatusOK {
					t.Errorf("callback answered %d", cb.Status)
				}
			}
		}
		if delivered != 2 {
			t.Fatalf("%d callbacks delivered, want 2", delivered)
		}
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Fatalf("status %s", got.Status)
		}
		if n := w.events(t, c.ID, domain.EventChargePaid); n != 1 {
			t.Errorf("%d charge.paid events, want 1", n)
		}
	})

	t.Run("several pix in one callback", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDrop)
		c1 := w.create(t, map[string]any{"amount": 1100, "payment_method": "pix"})
		c2 := w.create(t, map[string]any{"amount": 2200, "payment_method": "pix"})
		p1 := w.pay(t, pixsim.PayRequest{TxID: c1.Pix.TxID})
		p2 := w.pay(t, pixsim.PayRequest{TxID: c2.Pix.TxID})
		w.sim.SetCallbacks(pixsim.CallbacksNormal)
		body := fmt.Sprintf(`{"pix":[{"endToEndId":%q},{"endToEndId":%q},{"endToEndId":%q},{"endToEndId":"E99999998202611220000forgedxxxx2"}]}`,
			p1.EndToEndID, p2.EndToEndID, p1.EndToEndID)
		code, res := w.postCallback(t, w.hookURL(), body)
		if code != http.StatusOK || res["applied"] != 2.0 || res["ignored"] != 1.0 {
			t.Fatalf("callback: %d %+v, want 2 applied and the forged one ignored", code, res)
		}
		for _, c := range []chargeJSON{c1, c2} {
			if got := w.get(t, c.ID); got.Status != "paid" {
				t.Errorf("%s: %s", c.ID, got.Status)
			}
		}
	})

	t.Run("PSP unreachable while confirming: 503 so the PSP retries", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDrop)
		c := w.create(t, map[string]any{"amount": 1300, "payment_method": "pix"})
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		w.sim.SetCallbacks(pixsim.CallbacksNormal)
		post := func() int {
			code, _ := w.postCallback(t, w.hookURL(), fmt.Sprintf(`{"pix":[{"endToEndId":%q}]}`, p.EndToEndID))
			return code
		}
		w.sim.SetDown(true)
		code := post()
		w.sim.SetDown(false)
		if code != http.StatusServiceUnavailable {
			t.Fatalf("callback while the PSP is down: %d, want 503", code)
		}
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Fatalf("status %s before the retry", got.Status)
		}
		if code := post(); code != http.StatusOK {
			t.Fatalf("retried callback: %d", code)
		}
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Fatalf("status %s after the retry", got.Status)
		}
	})

	t.Run("forged callback changes nothing", func(t *testing.T) {
		c := w.create(t, map[string]any{"amount": 4100, "payment_method": "pix"})
		body := fmt.Sprintf(`{"pix":[{"endToEndId":"E99999998202611220000forgedxxxx1","txid":%q,"valor":"41.00"}]}`, c.Pix.TxID)
		if code, _ := w.postCallback(t, w.hookURL(), body); code != http.StatusOK {
			t.Errorf("forged callback answered %d", code)
		}
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Fatalf("a forged callback settled the charge: %s", got.Status)
		}
		if code, _ := w.postCallback(t, w.url+"/v1/providers/bcbpix/acct_unknown/"+bcbpix.NewCallbackToken()+"/pix", `{"pix":[]}`); code != http.StatusNotFound {
			t.Errorf("unknown account answered %d, want 404", code)
		}
	})

	t.Run("an empty pix array is answered 200", func(t *testing.T) {
		code, res := w.postCallback(t, w.hookURL(), `{"pix":[]}`)
		if code != http.StatusOK || res["applied"] != 0.0 || res["ignored"] != 0.0 {
			t.Errorf("empty callback: %d %v", code, res)
		}
	})

	t.Run("the PSP calls back by itself when a devolução ends; nothing changes", func(t *testing.T) {
		c := w.create(t, locked(6000))
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: otherDoc, Disclose: true})
		w.sim.Idle() // the devolução settles and its callback is answered
		if got := w.get(t, c.ID); got.Status != "refunded" {
			t.Fatalf("status %s", got.Status)
		}
		if rets := w.sim.Returns(p.EndToEndID); len(rets) != 1 || rets[0].Status != pixsim.ReturnDone {
			t.Errorf("devoluções %+v, want one DEVOLVIDO", rets)
		}
		n := 0
		for _, cb := range w.sim.Callbacks() {
			if cb.Cause == pixsim.CauseDevolucao && len(cb.E2EIDs) == 1 && cb.E2EIDs[0] == p.EndToEndID {
				n++
				if cb.Status != http.StatusOK {
					t.Errorf("devolução callback answered %d", cb.Status)
				}
			}
		}
		if n != 1 {
			t.Errorf("%d devolução callbacks, want 1", n)
		}
		if n := w.events(t, c.ID, domain.EventChargeRefunded); n > 1 {
			t.Errorf("%d charge.refunded events", n)
		}
	})

	t.Run("credentials never in logs", func(t *testing.T) {
		logs := w.logs.String()
		if !strings.Contains(logs, "pix payment applied") {
			t.Fatal("the test logged nothing: the check below would prove nothing")
		}
		hook := w.sim.Webhook(testPixKey)
		token := hook[strings.LastIndex(hook, "/")+1:]
		for _, secret := range []string{testClientSecret, "PRIVATE KEY", w.masterKey, strings.TrimSpace(w.pki.ClientKeyPEM)[40:80], token} {
			if strings.Contains(logs, secret) {
				t.Errorf("logs contain a secret (%.12s...)", secret)
			}
		}
	})
}

// The callback is authenticated (security.md, item 9): the account's token
// in the path and the PSP's client certificate, before any PSP call. It
// has a world of its own: its refusals count against the test's address.
func TestPixCallbackAuthentication(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.SQLiteDSN(t))
	var ids []string
	for i := range 100 {
		ids = append(ids, fmt.Sprintf(`{"endToEndId":"E99999998202611220000forged%05d"}`, i))
	}
	body := `{"pix":[` + strings.Join(ids, ",") + `]}`
	good := w.hookURL()
	wrongToken := w.url + "/v1/providers/bcbpix/" + w.acct.AccountID + "/" + bcbpix.NewCallbackToken() + "/pix"
	noToken := w.url + "/v1/providers/bcbpix/" + w.acct.AccountID + "/pix"
	cases := []struct {
		name   string
		client *http.Client
		url    string
		want   int
	}{
		{"wrong token", w.psp, wrongToken, http.StatusNotFound},
		{"no token (the old route)", w.psp, noToken, http.StatusNotFound},
		{"right token, no client certificate", w.http, good, http.StatusForbidden},
	}
	for _, tc := range cases {
		_, before := w.sim.Hits()
		logsBefore := strings.Count(w.logs.String(), "\n")
		code, _ := postWith(t, tc.client, tc.url, body)
		_, after := w.sim.Hits()
		lines := strings.Count(w.logs.String(), "\n") - logsBefore
		if code != tc.want || after != before {
			t.Errorf("%s: %d and %d PSP calls for 100 ids; want %d and none", tc.name, code, after-before, tc.want)
		}
		if lines > 2 { // the refusal's warning and the request log
			t.Errorf("%s: %d log lines for one request", tc.name, lines)
		}
	}
	if code, res := w.postCallback(t, good, body); code != http.StatusOK || res["ignored"] != 100.0 {
		t.Errorf("authenticated: %d %v, want 200 with the 100 unknown ids ignored", code, res)
	}
	// Refusals are limited per address: the 21st within a minute is 429
	// before the token is even looked at.
	var last int
	for range 20 {
		last, _ = postWith(t, w.psp, wrongToken, `{"pix":[]}`)
	}
	if last != http.StatusTooManyRequests {
		t.Errorf("after 22 refusals: %d, want 429", last)
	}
}

// Authenticated callbacks are limited per account. The world's budget is
// a burst of 5 refilled once an hour, so the count cannot depend on how fast
// this machine sends (with the default 200 refilled at 20/s, a loaded
// machine refilled faster than it sent and the test never saw a 429).
func TestPixCallbackRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	w := newWorldWith(t, testenv.SQLiteDSN(t), worldOptions{
		callbackLimit: ports.RateLimit{Rate: 1, Burst: 5, Period: time.Hour}})
	var accepted, limited int
	for range 8 {
		switch code, _ := w.postCallback(t, w.hookURL(), `{"pix":[]}`); code {
		case http.StatusOK:
			accepted++
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("callback answered %d", code)
		}
	}
	if accepted != 5 || limited != 3 {
		t.Errorf("8 callbacks against a burst of 5: %d accepted, %d limited; want 5 and 3", accepted, limited)
	}
}

// The Pix Automático callbacks (<registered url>/rec and /cobr) pass the
// checks of /pix: a wrong token is 404 and a missing client certificate
// 403, before any PSP call; a body that is not the callback's is 400; a
// rec the PSP does not know, or one no subscription of the account has,
// is ignored; a read-back the PSP cannot answer is 503, so the PSP sends
// the callback again.
func TestRecurringCallbackRoutes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.SQLiteDSN(t))
	ctx := context.Background()
	base := strings.TrimSuffix(w.hookURL(), "/pix")
	wrongToken := w.url + "/v1/providers/bcbpix/" + w.acct.AccountID + "/" + bcbpix.NewCallbackToken()
	req := recReq(t, "routes", domain.JourneyQRCode)
	req.Scope = ports.Scope{AccountID: w.acct.AccountID, Mode: domain.ModeLive}
	stray, err := w.app.BCBPix.CreateRecurrence(ctx, req) // at the PSP, not a subscription's
	if err != nil {
		t.Fatal(err)
	}
	recs := `{"recs":[{"idRec":"` + stray.RecID + `","status":"CRIADA"},{"idRec":"RR999999972027010100000000000","status":"APROVADA"}]}`
	cobrs := `{"cobsr":[{"idRec":"` + stray.RecID + `","txid":"` + txid("routes") + `","status":"ATIVA"}]}`
	for _, tc := range []struct {
		name, path, body string
		client           *http.Client
		url              string
		want             int
		psp              bool
	}{
		{"rec, wrong token", "/rec", recs, w.psp, wrongToken, http.StatusNotFound, false},
		{"cobr, wrong token", "/cobr", cobrs, w.psp, wrongToken, http.StatusNotFound, false},
		{"rec, no client certificate", "/rec", recs, w.http, base, http.StatusForbidden, false},
		{"cobr, not a callback", "/cobr", `{"cobsr":{}}`, w.psp, base, http.StatusBadRequest, false},
		{"rec, an unknown status", "/rec", `{"recs":[{"idRec":"` + stray.RecID + `","status":"OUTRO"}]}`, w.psp, base, http.StatusBadRequest, false},
		{"rec, none of the account's subscriptions", "/rec", recs, w.psp, base, http.StatusOK, true},
		{"cobr, unknown at the PSP", "/cobr", cobrs, w.psp, base, http.StatusOK, true},
	} {
		_, before := w.sim.Hits()
		code, res := postWith(t, tc.client, tc.url+tc.path, tc.body)
		_, after := w.sim.Hits()
		if code != tc.want || (after > before) != tc.psp {
			t.Errorf("%s: %d %v with %d PSP calls; want %d", tc.name, code, res, after-before, tc.want)
		}
		if code == http.StatusOK && (res["applied"] != 0.0 || res["ignored"] == 0.0) {
			t.Errorf("%s: %v, want everything ignored", tc.name, res)
		}
		list := map[string]string{"/rec": "recs", "/cobr": "cobsr"}[tc.path]
		if e, _ := res["error"].(map[string]any); code == http.StatusBadRequest && (e["param"] != list || e["code"] != "body_invalid") {
			t.Errorf("%s: %v, want the envelope naming %s", tc.name, res, list)
		}
	}
	w.sim.SetDown(true)
	code, _ := w.postCallback(t, base+"/rec", recs)
	w.sim.SetDown(false)
	if code != http.StatusServiceUnavailable {
		t.Errorf("with the PSP down: %d, want 503 for the PSP to retry", code)
	}
}
