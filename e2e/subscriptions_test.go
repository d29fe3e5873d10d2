package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/quitapix/quita/domain"
)

// A subscription's life over HTTP, every exchange held to
// api/openapi.yaml: created on each journey, authorised, its cycles run
// (one failing first), its charges listed, a variable one's amount set,
// one revoked and one cancelled, with errors on the way.
func TestSubscriptionFlow(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Assinaturas")
		start := domain.BrasiliaDate(e.clock.Now()).AddDays(5)
		body := func(journey string) map[string]any {
			m := map[string]any{"customer": map[string]any{"name": "Maria Silva", "document": "529.982.247-25"},
				"amount": 2990, "interval": "monthly", "start_date": start.String(),
				"end_date": domain.CycleDate(start, domain.IntervalMonthly, 3).String(), "contract": "C-1",
				"retry_policy": "three_in_seven_days", "journey": journey}
			if journey == "qr_code_with_first_payment" {
				m["first_payment"] = map[string]any{"amount": 990}
			}
			return m
		}
		type sub struct {
			ID          string         `json:"id"`
			Status      string         `json:"status"`
			LatestCycle map[string]any `json:"latest_cycle"`
		}
		create := func(b map[string]any) sub {
			var s sub
			a.test.create(t, "/subscriptions", b).want(t, http.StatusCreated).Decode(t, &s)
			return s
		}
		post := func(path string, body any, status int) sub {
			var s sub
			r := a.test.do(t, "POST", path, body, nil).want(t, status)
			if status == http.StatusOK {
				r.Decode(t, &s)
			}
			return s
		}
		var ids []string
		for _, j := range []string{"authorization_request", "qr_code", "qr_code_with_first_payment"} {
			s := create(body(j))
			ids = append(ids, s.ID)
			a.test.do(t, "GET", "/subscriptions/"+s.ID+"?include=qr_code_base64", nil, nil).want(t, http.StatusOK)
			if s := post("/test_helpers/subscriptions/"+s.ID+"/authorize", nil, http.StatusOK); s.Status != "active" {
				t.Fatalf("%s: authorized %+v", j, s)
			}
		}
		id := ids[0]
		post("/test_helpers/subscriptions/"+id+"/advance", map[string]any{"fail": true}, http.StatusOK)
		for range 3 {
			post("/test_helpers/subscriptions/"+id+"/advance", map[string]any{}, http.StatusOK)
		}
		if g := post("/test_helpers/subscriptions/"+id+"/advance", nil, http.StatusConflict); g.ID != "" {
			t.Fatal("advanced a completed subscription")
		}
		var charges struct {
			Data []json.RawMessage `json:"data"`
		}
		a.test.do(t, "GET", "/subscriptions/"+id+"/charges?limit=2", nil, nil).want(t, http.StatusOK)
		a.test.do(t, "GET", "/subscriptions/"+ids[2]+"/charges", nil, nil).want(t, http.StatusOK).Decode(t, &charges)
		if len(charges.Data) != 1 {
			t.Errorf("the first payment's subscription lists %d charges, want its first payment", len(charges.Data))
		}
		e.srv.RunWorkers(t)
		a.test.do(t, "GET", "/subscriptions/"+ids[1]+"/charges", nil, nil).want(t, http.StatusOK)

		post("/test_helpers/subscriptions/"+ids[1]+"/revoke", nil, http.StatusOK)
		post("/subscriptions/"+ids[2]+"/cancel", nil, http.StatusOK)
		post("/subscriptions/"+ids[2]+"/cancel", nil, http.StatusConflict)

		v := body("authorization_request")
		delete(v, "amount")
		v["variable"] = map[string]any{"max_amount": 5000}
		vs := create(v)
		post("/subscriptions/"+vs.ID+"/charges", map[string]any{"amount": 4000}, http.StatusOK)
		post("/subscriptions/"+vs.ID+"/charges", map[string]any{"amount": 5001}, http.StatusBadRequest)
		post("/subscriptions/"+id+"/charges", map[string]any{"amount": 1}, http.StatusUnprocessableEntity)
		post("/test_helpers/subscriptions/"+vs.ID+"/reject", nil, http.StatusOK)
		a.live.do(t, "POST", "/test_helpers/subscriptions/"+vs.ID+"/advance", nil, nil).want(t, http.StatusNotFound)
		a.test.create(t, "/subscriptions", map[string]any{"interval": "daily"}).want(t, http.StatusBadRequest)
		a.test.do(t, "GET", "/subscriptions?limit=2", nil, nil).want(t, http.StatusOK)
		a.test.do(t, "GET", "/subscriptions/sub_"+domain.DeriveTxID("x")[:26], nil, nil).want(t, http.StatusNotFound)
		a.test.do(t, "GET", "/events?type=subscription.*", nil, nil).want(t, http.StatusOK)
	})
}
