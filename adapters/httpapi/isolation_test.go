package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TestSubaccountIsolation walks every route of the router and, for each
// API-key route (isoChecked; the others are isoExempt, each with its
// reason), checks what a platform or a sub-account might misuse:
//
//   - (a) a platform's key with Quita-Account naming another platform's
//     sub-account: 404 account_not_found;
//   - (b) a sub-account's objects reached as its sibling (the platform
//     acting for the sibling, or the sibling's own key): 404;
//   - (c) a sub-account's own key with Quita-Account naming its sibling or
//     its platform: 403 account_header_not_allowed;
//   - (d) the platform's own charge, payment, refund, payout, event,
//     webhook endpoint, subscription and batch ids reached as its
//     sub-account: 404.
//
// Lists and totals read as the sub-account are empty, and a cursor or
// filter naming another scope's object finds nothing. Every object is
// first shown reachable by its owner, and is unchanged afterwards. A route
// neither checked nor exempt fails the test. Both databases.
func TestSubaccountIsolation(t *testing.T) {
	t.Parallel()
	full := walkRoutes(t, fullRouter(t))
	for _, rt := range full {
		_, checked := isoChecked[rt.name]
		if reason := exemptReason(rt.name); checked == (reason != "") {
			t.Errorf("route %q (%s %s) must be either in isoChecked or in isoExempt with a reason (checked %v, exempt %q)",
				rt.name, rt.method, rt.tpl, checked, reason)
		}
	}
	for name := range isoChecked {
		if !slices.ContainsFunc(full, func(rt walkedRoute) bool { return rt.name == name }) {
			t.Errorf("isoChecked names %q, which the router does not serve", name)
		}
	}
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			w := newIsoWorld(t, d.dsn(t))
			served := walkRoutes(t, w.e.srv.App.Handler.(*mux.Router))
			for _, rt := range full {
				if _, ok := isoChecked[rt.name]; !ok {
					continue
				}
				if !slices.Contains(served, rt) {
					t.Errorf("%s (%s %s) is checked but the test server does not serve it", rt.name, rt.method, rt.tpl)
					continue
				}
				t.Run(rt.name, func(t *testing.T) { w.check(t, rt, isoChecked[rt.name]) })
			}
			w.unchanged(t)
			w.writesReachTheirObjects(t, full)
		})
	}
}

// isoWorld is a platform with two sub-accounts, each holding one object
// of every kind, and another platform with a sub-account.
type isoWorld struct {
	e                *payEnv
	s1, s2           string // siblings: s1 holds nothing, s2 an object of every kind
	s1Key            string
	foreign          string // another platform's sub-account
	platform, seller isoObjects
	before           map[string]string
}

// isoObjects are one scope's object ids by kind, and the ids in every
// form an answer might show them (raw, prefixed).
type isoObjects struct {
	ids    map[string]string
	owner  [2]string // the key and Quita-Account that own them
	traces []string
}

func newIsoWorld(t *testing.T, dsn string) *isoWorld {
	e := newPayEnv(t, dsn)
	w := &isoWorld{e: e}
	w.s1, w.s2 = e.newSeller("Irmã Vazia"), e.newSeller("Irmã Cheia")
	other := e.srv.NewAccount(t, "Outra Plataforma")
	w.foreign = (&payEnv{t: t, srv: e.srv, clock: e.clock, acct: other}).newSeller("Alheia")
	w.s1Key = sellerKey(t, e, w.s1)
	// One key carries a few hundred requests: the limiter is not what
	// this measures.
	for _, acct := range []string{e.acct.AccountID, w.s1} {
		if err := e.srv.App.Dashboard.GuardSettings.Set(context.Background(), acct,
			ports.AccountSettings{RateLimitPerSecond: 1_000_000, RateLimitBurst: 1_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	w.platform = w.objects(e.acct.TestKey, "")
	w.seller = w.objects(e.acct.TestKey, w.s2)
	w.before = w.states()
	return w
}

// objects creates one object of every kind in the scope of key acting
// for acct ("": the key's own account).
func (w *isoWorld) objects(key, acct string) isoObjects {
	e := w.e
	t := e.t
	t.Helper()
	post := func(path string, body any, status int) apiResp {
		t.Helper()
		r := e.as("POST", path, key, acct, body, "Idempotency-Key", e.key())
		e.want(r, status, "")
		return r
	}
	o := isoObjects{ids: map[string]string{}, owner: [2]string{key, acct}}
	// The endpoint first, so the charge's events are delivered to it.
	o.ids[objEndpoint] = post("/webhooks/endpoints", map[string]any{"url": "http://127.0.0.1:9/hook",
		"events": []string{"charge.created", "charge.paid"}}, 201).str("id")
	charge := post("/charges", map[string]any{"amount": 5000, "payment_method": "pix",
		"customer": map[string]any{"name": "Ana", "document": payerCPF}}, 201).str("id")
	raw, _ := domain.ParseChargeID(charge)
	o.ids[objCharge], o.ids[objPayment] = charge, domain.PrefixTransaction+raw
	post("/test_helpers/charges/"+charge+"/pay", map[string]any{}, 200)
	// The key travels in the header post sends.
	o.ids[objRefund] = post("/payments/"+o.ids[objPayment]+"/refund",
		map[string]any{"amount": 100, "strategy": "devolution"}, 201).str("id")
	o.ids[objPayout] = post("/payouts", map[string]any{"amount": 100,
		"destination": map[string]any{"pix_key": "financeiro@example.com"}}, 201).str("id")
	// A transfer neither end of which is s1: the platform's goes to s2,
	// s2's to the platform.
	dest := w.s2
	if acct != "" {
		dest = e.acct.AccountID
	}
	o.ids[objTransfer] = post("/transfers", map[string]any{"amount": 10, "destination": dest}, 201).str("id")
	o.ids[objSubscription] = post("/subscriptions", map[string]any{"customer": map[string]any{"name": "Ana", "document": payerCPF},
		"amount": 990, "interval": "monthly", "start_date": domain.BrasiliaDate(e.clock.Now()).AddDays(5).String(),
		"contract": "CTR-ISO", "journey": "qr_code"}, 201).str("id")
	o.ids[objBatch] = post("/charges/batch", map[string]any{"charges": []any{
		map[string]any{"amount": 1000, "payment_method": "pix"}}}, 202).str("id")
	if _, err := e.srv.App.Webhooks.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := e.as("GET", "/events?limit=1", key, acct, nil)
	data, _ := evs.Body["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("events of the scope: %s", evs.Raw)
	}
	o.ids[objEvent], _ = data[0].(map[string]any)["id"].(string)
	// The platform's sub-account s2 is the platform's object and, named
	// by s1, its sibling's.
	o.ids[objSubaccount] = w.s2
	for _, id := range o.ids {
		o.traces = append(o.traces, id)
	}
	o.traces = append(o.traces, raw)
	return o
}

// path is rt's path (relative to /v1) naming o's objects.
func (o isoObjects) path(rt walkedRoute, spec isoRoute) string {
	p := strings.TrimPrefix(rt.tpl, "/v1")
	p = strings.ReplaceAll(p, "{refundId}", o.ids[objRefund])
	return strings.ReplaceAll(p, "{id}", o.ids[spec.obj])
}

// query is spec's query naming o's objects.
func (o isoObjects) query(spec isoRoute) string {
	q := spec.query
	for kind, id := range o.ids {
		q = strings.ReplaceAll(q, "{"+kind+"}", id)
	}
	return q
}

// check runs (a) to (d) on one route.
func (w *isoWorld) check(t *testing.T, rt walkedRoute, spec isoRoute) {
	e := w.e
	send := func(key, acct, path string) apiResp {
		t.Helper()
		return e.as(rt.method, path, key, acct, spec.body, "Idempotency-Key", e.key())
	}
	holds := func(r apiResp, o isoObjects) string {
		for _, s := range o.traces {
			if bytes.Contains(r.Raw, []byte(s)) {
				return s
			}
		}
		return ""
	}
	own := w.platform.path(rt, spec)

	// (a) Another platform's sub-account: the same 404 as no account.
	r := send(e.acct.TestKey, w.foreign, own)
	if r.Status != 404 || r.code() != "account_not_found" || r.param() != "Quita-Account" || bytes.Contains(r.Raw, []byte(w.foreign)) {
		t.Errorf("(a) platform key, Quita-Account of another platform's sub-account: %d %s", r.Status, r.Raw)
	}
	// (c) A sub-account's own key names its sibling or its platform.
	for _, acct := range []string{w.s2, e.acct.AccountID} {
		if r := send(w.s1Key, acct, own); r.Status != 403 || r.code() != "account_header_not_allowed" {
			t.Errorf("(c) sub-account key, Quita-Account %s: %d %s", acct, r.Status, r.Raw)
		}
	}
	// (b) and (d): as s1 — the platform acting for it, or its own key —
	// the sibling's objects and the platform's are not there.
	as1 := [][2]string{{e.acct.TestKey, w.s1}, {w.s1Key, ""}}
	for _, other := range []struct {
		check string
		o     isoObjects
	}{{"(b) sibling's", w.seller}, {"(d) platform's", w.platform}} {
		if spec.obj != "" {
			w.control(t, rt, spec, other.o)
		}
		for _, caller := range as1 {
			who := "as s1 by " + map[bool]string{true: "the platform acting", false: "its own key"}[caller[1] != ""]
			switch {
			case spec.obj != "":
				r := send(caller[0], caller[1], other.o.path(rt, spec))
				if r.Status != 404 || r.code() == "route_not_found" {
					t.Errorf("%s %s, %s: %d %s, want 404", other.check, spec.obj, who, r.Status, r.Raw)
				}
				if s := holds(r, other.o); s != "" {
					t.Errorf("%s %s, %s: the answer holds %s: %s", other.check, spec.obj, who, s, r.Raw)
				}
			case spec.empty != nil:
				r := send(caller[0], caller[1], own)
				if !spec.empty(r) || holds(r, other.o) != "" {
					t.Errorf("%s collection, %s: not empty: %d %s", other.check, who, r.Status, r.Raw)
				}
				if spec.query == "" {
					continue
				}
				r = send(caller[0], caller[1], own+"?"+other.o.query(spec))
				if (r.Status != 400 && r.Status != 404 && !emptyData(r)) || holds(r, other.o) != "" {
					t.Errorf("%s %s, %s: %d %s, want nothing found", other.check, spec.query, who, r.Status, r.Raw)
				}
			}
		}
	}
	if spec.empty != nil {
		// The owner's own answer is not empty: the check above can fail.
		if r := send(e.acct.TestKey, "", own); spec.empty(r) {
			t.Errorf("the platform's own %s is empty too: %s", rt.name, r.Raw)
		}
	}
}

// control shows that a read of spec's object of o answers its owner (not
// 404), so a 404 to anyone else is about who asks. Writes are not sent:
// they would change the object.
func (w *isoWorld) control(t *testing.T, rt walkedRoute, spec isoRoute, o isoObjects) {
	t.Helper()
	if rt.method != http.MethodGet || (spec.obj == objSubaccount && o.owner[1] != "") {
		return // a sub-account has no sub-accounts: only the platform reads s2
	}
	if r := w.e.as(rt.method, o.path(rt, spec), o.owner[0], o.owner[1], nil); r.Status == 404 {
		t.Errorf("the owner reading its own %s: %d %s", spec.obj, r.Status, r.Raw)
	}
}

// states reads, as their owners, the status of each object a write route
// could change.
func (w *isoWorld) states() map[string]string {
	e := w.e
	out := map[string]string{}
	for scope, o := range map[string]isoObjects{"platform": w.platform, "seller": w.seller} {
		get := func(path string) apiResp { return e.as("GET", path, o.owner[0], o.owner[1], nil) }
		out[scope+" charge"] = get("/charges/" + o.ids[objCharge]).str("status")
		out[scope+" payout"] = get("/payouts/" + o.ids[objPayout]).str("status")
		out[scope+" subscription"] = get("/subscriptions/" + o.ids[objSubscription]).str("status")
		out[scope+" refunds"] = string(get("/payments/" + o.ids[objPayment] + "/refunds").Raw)
		out[scope+" endpoints"] = string(get("/webhooks/endpoints").Raw)
		out[scope+" balance"] = string(get("/wallets/balance?currency=BRL").Raw)
	}
	for _, s := range []string{w.s1, w.s2} {
		out[s] = e.as("GET", "/subaccounts/"+s, e.acct.TestKey, "", nil).str("status")
	}
	return out
}

// unchanged: no write of the walk changed an object it was refused.
func (w *isoWorld) unchanged(t *testing.T) {
	after := w.states()
	for k, v := range w.before {
		if after[k] != v || v == "" {
			t.Errorf("%s: %q before the walk, %q after", k, v, after[k])
		}
	}
}

// writesReachTheirObjects sends each write of one object, with the body
// the walk sent, as the object's owner: none is 404, so the walk's 404s
// were about who asked. It runs last and changes the seller's objects,
// the final writes (cancel, delete, disable) after the others.
func (w *isoWorld) writesReachTheirObjects(t *testing.T, routes []walkedRoute) {
	rank := func(rt walkedRoute) int {
		switch {
		case rt.name == "subaccounts.disable":
			return 3
		case strings.HasPrefix(rt.name, "subaccounts."):
			return 2
		}
		for _, final := range []string{"cancel", "delete", "revoke", "reject", "fail", "expire"} {
			if strings.Contains(rt.name, final) {
				return 1
			}
		}
		return 0
	}
	var writes []walkedRoute
	for _, rt := range routes {
		if spec, ok := isoChecked[rt.name]; ok && spec.obj != "" && rt.method != http.MethodGet {
			writes = append(writes, rt)
		}
	}
	slices.SortStableFunc(writes, func(a, b walkedRoute) int { return rank(a) - rank(b) })
	for _, rt := range writes {
		spec := isoChecked[rt.name]
		o := w.seller
		if spec.obj == objSubaccount {
			o = w.platform // s2 is the platform's to change
		}
		r := w.e.as(rt.method, o.path(rt, spec), o.owner[0], o.owner[1], spec.body, "Idempotency-Key", w.e.key())
		if r.Status == 404 {
			t.Errorf("%s by the owner of its %s: %d %s", rt.name, spec.obj, r.Status, r.Raw)
		}
	}
}

// walkedRoute is one method of one named route.
type walkedRoute struct{ name, method, tpl string }

// walkRoutes lists every route that serves a method (not the 405
// fallbacks, nor subrouters' prefixes), HEAD left out.
func walkRoutes(t *testing.T, r *mux.Router) []walkedRoute {
	t.Helper()
	var out []walkedRoute
	err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		for _, m := range methods {
			if m != http.MethodHead {
				out = append(out, walkedRoute{route.GetName(), m, tpl})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("walked only %d routes", len(out))
	}
	return out
}
