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

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
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
