package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

var pathVar = regexp.MustCompile(`\{[^}]+\}`)

// TestAuthorizationMatrix walks every route of the service and calls it
// with account B's credentials (API keys and dashboard token) on account
// A's objects: never a 2xx for a path naming A's object, only 401, 403 or
// 404, and never any of A's identifiers in any answer.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	a := e.account(srv, "Loja A")
	b := e.account(srv, "Loja B")
	tokB := e.login(srv, b)

	// Account A's objects.
	r := call(t, http.MethodPost, srv.BaseURL+"/charges", map[string]string{"apikey": a.TestKey, "Idempotency-Key": "matrix-charge-a"},
		`{"amount":1000,"payment_method":"pix","customer":{"name":"Ana","document":"`+payerCPF+`"}}`)
	if r.Status != 201 {
		t.Fatalf("create A's charge: %d %s", r.Status, r.Body)
	}
	chargeID := r.json(t)["id"].(string)
	raw, _ := domain.ParseChargeID(chargeID)
	keys, err := srv.App.Dashboard.Keys.List(context.Background(), app.DashboardUser{AccountID: a.AccountID})
	if err != nil || len(keys) == 0 {
		t.Fatal(err)
	}
	keyID := keys[0].ID
	evs := call(t, http.MethodGet, srv.BaseURL+"/events?limit=1", map[string]string{"apikey": a.TestKey}, "")
	var evPage struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(evs.Body, &evPage); evs.Status != 200 || err != nil || len(evPage.Data) != 1 {
		t.Fatalf("A's events: %d %s", evs.Status, evs.Body)
	}
	eventID := evPage.Data[0].ID
	aSecrets := []string{chargeID, raw, keyID, eventID, a.AccountID, a.UserID, domain.APIKeyFingerprint(a.TestKey), domain.APIKeyFingerprint(a.LiveKey)}
	objectFor := func(tpl string) string {
		switch {
		case strings.Contains(tpl, "/api-keys/"):
			return keyID
		case strings.Contains(tpl, "/payments/"):
			return raw
		case strings.Contains(tpl, "/events/"):
			return eventID
		default:
			return chargeID
		}
	}

	router, ok := srv.App.Handler.(*mux.Router)
	if !ok {
		t.Fatalf("handler is %T, not *mux.Router", srv.App.Handler)
	}
	type route struct{ method, tpl string }
	var routes []route
	err = router.Walk(func(rt *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := rt.GetPathTemplate()
		if err != nil || !strings.HasPrefix(tpl, "/v1/") {
			return nil
		}
		methods, err := rt.GetMethods()
		if err != nil {
			return nil // a subrouter's prefix route
		}
		for _, m := range methods {
			routes = append(routes, route{m, tpl})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 8 {
		t.Fatalf("walked only %d routes", len(routes))
	}
	creds := map[string]map[string]string{
		"B test key": {"apikey": b.TestKey},
		"B live key": {"apikey": b.LiveKey},
		"B token":    {"Authorization": "Bearer " + tokB},
	}
	for _, rt := range routes {
		path := pathVar.ReplaceAllStringFunc(rt.tpl, func(string) string { return objectFor(rt.tpl) })
		hasObject := path != rt.tpl
		for credName, hdr := range creds {
			name := rt.method + " " + rt.tpl + " as " + credName
			h := map[string]string{"Idempotency-Key": "matrix-" + strconv.Itoa(len(name)) + "-" + credName[2:6]}
			for k, v := range hdr {
				h[k] = v
			}
			body := ""
			if rt.method == http.MethodPost || rt.method == http.MethodPut || rt.method == http.MethodPatch {
				body = `{}`
			}
			res := call(t, rt.method, srv.URL+path, h, body)
			e.secretsIn(res.Body)
			t.Run(name, func(t *testing.T) {
				for _, s := range aSecrets {
					if bytes.Contains(res.Body, []byte(s)) {
						t.Fatalf("answer %d holds A's identifier %s: %s", res.Status, s, res.Body)
					}
				}
				if !hasObject || slices.Contains([]int{401, 403, 404}, res.Status) {
					return
				}
				// A route that validates its input before it looks the
				// object up may answer 400/422, as long as the answer does
				// not depend on the object: the same as for an id that
				// does not exist.
				ghost := call(t, rt.method, srv.URL+pathVar.ReplaceAllString(rt.tpl, "ch_doesnotexist0000000000000"), h, body)
				gs, gc := ghost.errCode()
				rs, rc := res.errCode()
				if res.Status >= 500 || res.Status < 400 || res.Status != ghost.Status || gs != rs || gc != rc {
					t.Fatalf("B on A's object: %d %s (nonexistent object: %d %s), want 404 (or 401/403)", res.Status, res.Body, ghost.Status, ghost.Body)
				}
				t.Logf("validated before lookup: %d %s/%s for A's object and a missing one alike", res.Status, rs, rc)
			})
		}
	}
	// A's charge is untouched and A's key still works.
	r = call(t, http.MethodGet, srv.BaseURL+"/charges/"+chargeID, keyHdr(a.TestKey), "")
	if r.Status != 200 || r.json(t)["status"] != "pending" {
		t.Fatalf("A's charge after the matrix: %d %s", r.Status, r.Body)
	}
}

// TestDashboardAuthorizationMatrix is the matrix for the web dashboard:
// every /dashboard route, in both modes, with account B's session cookie
// (and B's valid CSRF token on forms) on account A's charge, key, webhook
// endpoint and delivery ids: always 404 (or 403), never a page, a
// redirect or a change, and never one of A's identifiers in the answer.
func TestDashboardAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	a := e.account(srv, "Loja A")
	b := e.account(srv, "Loja B")
	tokB := e.login(srv, b)
	ctx := context.Background()
	sessionA, err := srv.App.Dashboard.Sessions.Verify(ctx, e.login(srv, a))
	if err != nil {
		t.Fatal(err)
	}

	r := call(t, http.MethodPost, srv.BaseURL+"/charges", map[string]string{"apikey": a.TestKey, "Idempotency-Key": "dash-matrix-a"},
		`{"amount":1000,"payment_method":"pix","customer":{"name":"Ana","document":"`+payerCPF+`"}}`)
	if r.Status != 201 {
		t.Fatalf("create A's charge: %d %s", r.Status, r.Body)
	}
	chargeID := r.json(t)["id"].(string)
	txid := r.json(t)["pix"].(map[string]any)["txid"].(string)
	raw, _ := domain.ParseChargeID(chargeID)
	if r := call(t, http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+chargeID+"/pay", keyHdr(a.TestKey), `{}`); r.Status != 200 {
		t.Fatalf("pay A's charge: %d %s", r.Status, r.Body)
	}
	r = call(t, http.MethodPost, srv.BaseURL+"/webhooks/endpoints", keyHdr(a.TestKey),
		`{"url":"http://127.0.0.1:9/hook","events":["charge.created","charge.paid"]}`)
	if r.Status != 201 {
		t.Fatalf("A's endpoint: %d %s", r.Status, r.Body)
	}
	endpointID := r.json(t)["id"].(string)
	e.secretsIn(r.Body)
	if _, err := srv.App.Webhooks.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	callerA := app.Caller{Account: domain.Account{ID: a.AccountID}, Mode: domain.ModeTest}
	ds, _, err := srv.App.Webhooks.ListDeliveries(ctx, ports.DeliveryQuery{Scope: callerA.Scope(), Limit: 10})
	if err != nil || len(ds) == 0 {
		t.Fatalf("A's deliveries: %v %v", ds, err)
	}
	deliveryID := ds[0].ID
	r = call(t, http.MethodPost, srv.BaseURL+"/payouts", map[string]string{"apikey": a.TestKey, "Idempotency-Key": "dash-matrix-payout"},
		`{"amount":100,"destination":{"pix_key":"financeiro@loja-a.example.com"}}`)
	if r.Status != 201 {
		t.Fatalf("A's payout: %d %s", r.Status, r.Body)
	}
	payoutID := r.json(t)["id"].(string)
	r = call(t, http.MethodPost, srv.BaseURL+"/subscriptions", map[string]string{"apikey": a.TestKey, "Idempotency-Key": "dash-matrix-sub"},
		`{"customer":{"name":"Ana","document":"`+payerCPF+`"},"amount":990,"interval":"monthly","start_date":"`+
			domain.BrasiliaDate(time.Now()).AddDays(5).String()+`","contract":"CTR-A","journey":"qr_code"}`)
	if r.Status != 201 {
		t.Fatalf("A's subscription: %d %s", r.Status, r.Body)
	}
	subscriptionID := r.json(t)["id"].(string)
	r = call(t, http.MethodPost, srv.BaseURL+"/subaccounts", map[string]string{"apikey": a.TestKey, "Idempotency-Key": "dash-matrix-seller"},
		`{"name":"Vendedor de A","document":"`+payerCPF+`","email":"vendedor@loja-a.example.com"}`)
	if r.Status != 201 {
		t.Fatalf("A's sub-account: %d %s", r.Status, r.Body)
	}
	sellerID := r.json(t)["id"].(string)
	keys, err := srv.App.Dashboard.Keys.List(ctx, app.DashboardUser{AccountID: a.AccountID})
	if err != nil || len(keys) < 2 {
		t.Fatal(err)
	}
	keyFor := map[string]string{}
	for _, k := range keys {
		keyFor[string(k.Mode)] = k.ID
	}
	aSecrets := []string{chargeID, raw, txid, endpointID, deliveryID, payoutID, subscriptionID, "CTR-A", keys[0].ID, keys[1].ID, a.AccountID, a.UserID, "Loja A",
		sellerID, "Vendedor de A", sessionA.TokenID,
		domain.APIKeyFingerprint(a.TestKey)[:12], domain.APIKeyFingerprint(a.LiveKey)[:12]}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	cookie := "quita_session=" + tokB
	page, err := testkit.Send(noRedirect, http.MethodGet, srv.URL+"/dashboard/test/keys", nil, testkit.Header{"Cookie": cookie})
	if err != nil || page.Status != 200 {
		t.Fatalf("B's keys page: %v %+v", err, page)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page.Body)
	if m == nil {
		t.Fatal("no CSRF token on B's page")
	}
	csrfB := string(m[1])

	router := srv.App.Handler.(*mux.Router)
	type route struct{ method, tpl string }
	var routes []route
	_ = router.Walk(func(rt *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := rt.GetPathTemplate()
		if err != nil || !strings.HasPrefix(tpl, "/dashboard/") || !strings.Contains(tpl, "{id}") {
			return nil
		}
		if methods, err := rt.GetMethods(); err == nil {
			for _, m := range methods {
				routes = append(routes, route{m, tpl})
			}
		}
		return nil
	})
	if len(routes) < 9 {
		t.Fatalf("walked only %d dashboard routes with an object: %v", len(routes), routes)
	}
	for _, rt := range routes {
		for _, mode := range []string{"test", "live"} {
			obj := chargeID
			switch {
			case strings.Contains(rt.tpl, "/keys/"):
				obj = keyFor[mode]
			case strings.Contains(rt.tpl, "/webhooks/"):
				obj = endpointID
			case strings.Contains(rt.tpl, "/deliveries/"):
				obj = deliveryID
			case strings.Contains(rt.tpl, "/payouts/"):
				obj = payoutID
			case strings.Contains(rt.tpl, "/subscriptions/"):
				obj = subscriptionID
			case strings.Contains(rt.tpl, "/subaccounts/"):
				obj = sellerID
			case strings.Contains(rt.tpl, "/sessions/"):
				obj = sessionA.TokenID
			}
			path := strings.Replace(strings.Replace(rt.tpl, "{mode:live|test}", mode, 1), "{id}", obj, 1)
			h := testkit.Header{"Cookie": cookie}
			var body any
			if rt.method == http.MethodPost {
				body = "csrf=" + csrfB + "&amount=10&label=x&url=http%3A%2F%2F127.0.0.1%3A9%2F&events=charge.paid&confirm=yes&email=b%40loja-b.example.com"
				h["Content-Type"] = "application/x-www-form-urlencoded"
				h["Origin"] = srv.URL
			}
			res, err := testkit.Send(noRedirect, rt.method, srv.URL+path, body, h)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(rt.method+" "+path, func(t *testing.T) {
				if res.Status != 404 && res.Status != 403 {
					t.Errorf("B on A's object: %d (Location %q), want 404", res.Status, res.Header.Get("Location"))
				}
				for _, s := range aSecrets {
					if bytes.Contains(res.Body, []byte(s)) {
						t.Errorf("answer %d holds A's %s", res.Status, s)
					}
				}
			})
		}
	}
	// B's own pages (lists, overview, search) show nothing of A's, in
	// either mode, even when B searches for A's charge or txid.
	for _, p := range []string{"/", "/charges", "/charges?q=" + chargeID, "/charges?q=" + txid,
		"/charges?after=" + chargeID, "/refunds", "/payouts", "/payouts?after=" + payoutID,
		"/subscriptions", "/subscriptions?after=" + subscriptionID, "/webhooks", "/webhooks?endpoint=" + endpointID, "/keys", "/logs",
		"/subaccounts", "/subaccounts?after=" + sellerID} {
		for _, mode := range []string{"test", "live"} {
			res, err := testkit.Send(noRedirect, http.MethodGet, srv.URL+"/dashboard/"+mode+p, nil, testkit.Header{"Cookie": cookie})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != 200 && res.Status != 404 {
				t.Errorf("B's %s%s: %d", mode, p, res.Status)
			}
			for _, s := range aSecrets {
				if bytes.Contains(res.Body, []byte(s)) && !strings.Contains(p, s) {
					t.Errorf("B's %s%s holds A's %s", mode, p, s)
				}
			}
		}
	}
	// Nothing of A's changed: the charge is still paid and unrefunded,
	// the endpoint and both keys are there.
	r = call(t, http.MethodGet, srv.BaseURL+"/charges/"+chargeID, keyHdr(a.TestKey), "")
	if r.Status != 200 || r.json(t)["status"] != "paid" {
		t.Fatalf("A's charge after the matrix: %d %s", r.Status, r.Body)
	}
	if rs, err := srv.App.Payments.ListRefunds(ctx, callerA, raw); err != nil || len(rs) != 0 {
		t.Fatalf("A's refunds after the matrix: %v %v", rs, err)
	}
	if after, _ := srv.App.Dashboard.Keys.List(ctx, app.DashboardUser{AccountID: a.AccountID}); len(after) != len(keys) {
		t.Fatalf("A's keys after the matrix: %d, want %d", len(after), len(keys))
	}
	if ss, _ := srv.App.Dashboard.Sessions.ListSessions(ctx, sessionA); len(ss) != 1 || ss[0].TokenID != sessionA.TokenID {
		t.Fatalf("A's sessions after the matrix: %+v", ss)
	}
	if r := call(t, http.MethodGet, srv.BaseURL+"/payouts/"+payoutID, keyHdr(a.TestKey), ""); r.Status != 200 || r.json(t)["status"] != "pending" {
		t.Fatalf("A's payout after the matrix: %d %s", r.Status, r.Body)
	}
	if r := call(t, http.MethodGet, srv.BaseURL+"/subscriptions/"+subscriptionID, keyHdr(a.TestKey), ""); r.Status != 200 ||
		r.json(t)["status"] != "pending_authorization" {
		t.Fatalf("A's subscription after the matrix: %d %s", r.Status, r.Body)
	}
	if eps, _ := srv.App.Webhooks.ListEndpoints(ctx, callerA); len(eps) != 1 {
		t.Fatalf("A's endpoints after the matrix: %d", len(eps))
	}
	if r := call(t, http.MethodGet, srv.BaseURL+"/subaccounts/"+sellerID+"/invitations", keyHdr(a.TestKey), ""); r.Status != 200 ||
		!bytes.Contains(r.Body, []byte(`"data":[]`)) {
		t.Fatalf("A's seller's invitations after the matrix: %d %s", r.Status, r.Body)
	}
	if r := call(t, http.MethodGet, srv.BaseURL+"/subaccounts/"+sellerID, keyHdr(a.TestKey), ""); r.Status != 200 || r.json(t)["status"] != "active" {
		t.Fatalf("A's seller after the matrix: %d %s", r.Status, r.Body)
	}
}
