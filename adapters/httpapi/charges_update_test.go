package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testkit"
)

// A pending due-date charge's terms are revised with POST
// /v1/charges/{id}: the answer is the charge with the new terms and the
// expiry of the new last payable day, amount_due and the sandbox's payment
// follow them, and members left out are kept.
func TestDueDateChargeRevise(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			created := e.createCharge(e.body())
			e.want(created, 201, "")
			id := created.str("id")
			newDue := e.today.AddDays(20)
			newEffDue := bizdays.NextBusinessDay(newDue)
			newLast := bizdays.NextBusinessDay(newEffDue.AddDays(3))
			r := e.call("POST", "/charges/"+id, e.acct.TestKey, map[string]any{
				"due_date": newDue.String(), "days_after_due": 3,
				"fine": map[string]any{"type": "percent", "rate": "5.00"}, "interest": nil, "discount": nil})
			e.want(r, 200, "")
			if r.str("id") != id || r.str("due_date") != newDue.String() || r.num("days_after_due") != 3 || r.str("status") != "pending" {
				t.Fatalf("revised charge: %s", r.Raw)
			}
			if !strings.Contains(string(r.Raw), `"fine":{"type":"percent","rate":"5.00"}`) ||
				!strings.Contains(string(r.Raw), `"abatement":{"type":"fixed","amount":100}`) {
				t.Errorf("revised rules: %s", r.Raw)
			}
			for _, m := range []string{"interest", "discount"} {
				if _, ok := r.Body[m]; ok {
					t.Errorf("%s was removed but is shown: %s", m, r.Raw)
				}
			}
			pix, _ := r.Body["pix"].(map[string]any)
			if at, err := time.Parse(time.RFC3339Nano, pix["expires_at"].(string)); err != nil || !at.Equal(domain.EndOfBrasiliaDay(newLast)) {
				t.Errorf("pix.expires_at %v, want the end of the new last payable day %s", pix["expires_at"], newLast)
			}
			get := e.call("GET", "/charges/"+id, e.acct.TestKey, nil)
			if get.str("due_date") != newDue.String() {
				t.Errorf("a read after the revision shows due_date %q", get.str("due_date"))
			}

			// Abatement 1.00 kept: base 99.00; a 5 % fine late, no
			// interest; no discount early.
			for _, tc := range []struct {
				day  bizdays.Date
				want int64
			}{{e.today, 9900}, {e.effDue.AddDays(2), 9900}, {newEffDue.AddDays(2), 9900 + 495}} {
				got := e.call("GET", "/charges/"+id+"/amount_due?date="+tc.day.String(), e.acct.TestKey, nil)
				e.want(got, 200, "")
				if got.num("amount_due") != tc.want {
					t.Errorf("amount_due on %s = %d, want %d: %s", tc.day, got.num("amount_due"), tc.want, got.Raw)
				}
			}
			e.want(e.call("GET", "/charges/"+id+"/amount_due?date="+newLast.AddDays(1).String(), e.acct.TestKey, nil), 422, "charge_overdue_closed")

			// Only days_after_due: the due date and rules stay.
			r = e.call("POST", "/charges/"+id, e.acct.TestKey, map[string]any{"days_after_due": 10})
			e.want(r, 200, "")
			if r.str("due_date") != newDue.String() || r.num("days_after_due") != 10 || !strings.Contains(string(r.Raw), `"fine":{"type":"percent","rate":"5.00"}`) {
				t.Errorf("a revision of days_after_due alone: %s", r.Raw)
			}

			lateDay := newEffDue.AddDays(2).String()
			paid := e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, map[string]any{"date": lateDay})
			e.want(paid, 200, "")
			if paid.str("status") != "paid" || !strings.Contains(string(paid.Raw), `"paid":{"date":"`+lateDay+`","amount":10395,`) {
				t.Fatalf("paid on %s: %s", lateDay, paid.Raw)
			}
			e.wantCredited(id, 10395)
		})
	}
}

// Refusals, in the error envelope: an immediate charge is 422
// charge_not_due_date; a paid, expired or cancelled one 409
// charge_not_pending; terms the create would refuse are 400 naming the
// field; another account's or mode's charge is 404.
func TestDueDateChargeReviseRefusals(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			revise := func(id string, body map[string]any) apiResp {
				return e.call("POST", "/charges/"+id, e.acct.TestKey, body)
			}
			extend := map[string]any{"days_after_due": 9}
			plain := e.createCharge(map[string]any{"amount": 500, "payment_method": "pix"})
			e.want(revise(plain.str("id"), extend), 422, "charge_not_due_date")

			paid := e.createCharge(e.body())
			e.want(e.call("POST", "/test_helpers/charges/"+paid.str("id")+"/pay", e.acct.TestKey, map[string]any{}), 200, "")
			e.want(revise(paid.str("id"), extend), 409, "charge_not_pending")
			expired := e.createCharge(e.body())
			e.want(e.call("POST", "/test_helpers/charges/"+expired.str("id")+"/expire", e.acct.TestKey, nil), 200, "")
			e.want(revise(expired.str("id"), extend), 409, "charge_not_pending")
			cancelled := e.createCharge(e.body())
			e.want(e.call("POST", "/payments/tx_"+strings.TrimPrefix(cancelled.str("id"), "ch_")+"/cancel", e.acct.TestKey, map[string]any{}), 200, "")
			e.want(revise(cancelled.str("id"), extend), 409, "charge_not_pending")

			open := e.createCharge(e.body())
			id := open.str("id")
			for _, tc := range []struct {
				name  string
				body  map[string]any
				code  string
				param string
			}{
				{"bad due_date", map[string]any{"due_date": "30/11/2026"}, "parameter_invalid", "due_date"},
				{"due_date removed", map[string]any{"due_date": nil}, "parameter_invalid", "due_date"},
				{"due_date before today", map[string]any{"due_date": e.today.AddDays(-1).String(), "discount": nil}, "parameter_invalid", "due_date"},
				{"days_after_due removed", map[string]any{"days_after_due": nil}, "parameter_invalid", "days_after_due"},
				{"negative days_after_due", map[string]any{"days_after_due": -1}, "parameter_invalid", "days_after_due"},
				{"fine rate with no decimals", map[string]any{"fine": map[string]any{"type": "percent", "rate": "2"}}, "parameter_invalid", "fine"},
				{"unknown interest member", map[string]any{"interest": map[string]any{"type": "amount_per_day", "amount": 5, "until": []any{}}}, "parameter_unknown", "interest.until"},
				{"discount tier after the due date", map[string]any{"discount": map[string]any{"type": "fixed_until",
					"until": []any{map[string]any{"date": e.due.AddDays(1).String(), "amount": 100}}}}, "parameter_invalid", "discount.until[0]"},
				{"bad discount tier date", map[string]any{"discount": map[string]any{"type": "fixed_until",
					"until": []any{map[string]any{"date": "soon", "amount": 100}}}}, "parameter_invalid", "discount.until[0].date"},
				{"abatement of the whole amount", map[string]any{"abatement": map[string]any{"type": "fixed", "amount": 10000}}, "parameter_invalid", "abatement"},
				{"the amount is not revisable", map[string]any{"amount": 20000}, "parameter_unknown", "amount"},
			} {
				t.Run(tc.name, func(t *testing.T) { wantParam(t, revise(id, tc.body), 400, tc.code, tc.param) })
			}
			if got := e.call("GET", "/charges/"+id, e.acct.TestKey, nil); got.str("due_date") != e.due.String() || got.num("days_after_due") != 5 {
				t.Errorf("refused revisions changed the charge: %s", got.Raw)
			}
			e.want(e.call("POST", "/charges/"+id, e.acct.LiveKey, extend), 404, "resource_not_found")
			other := e.srv.NewAccount(t, "Outra Loja")
			e.want(e.call("POST", "/charges/"+id, other.TestKey, extend), 404, "resource_not_found")
			e.want(revise("ch_"+strings.Repeat("z", 26), extend), 404, "resource_not_found")
		})
	}
}

// An Idempotency-Key makes a revision safe to retry, as for the other
// writes: the same request again is the first answer replayed; the key
// with another request is 409 idempotency_key_reused.
func TestDueDateChargeReviseIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newDueEnv(t, "")
	id := e.createCharge(e.body()).str("id")
	h := testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": "revise-terms-0001"}
	url := e.srv.BaseURL + "/charges/" + id
	first := testkit.Do(t, "POST", url, map[string]any{"days_after_due": 12}, h)
	if first.Status != 200 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	wantReplay(t, first, testkit.Do(t, "POST", url, map[string]any{"days_after_due": 12}, h))
	other := decodeResp(t, testkit.Do(t, "POST", url, map[string]any{"days_after_due": 13}, h))
	e.want(other, 409, "idempotency_key_reused")
	if got := e.call("GET", "/charges/"+id, e.acct.TestKey, nil); got.num("days_after_due") != 12 {
		t.Errorf("days_after_due %d after the reused key, want 12", got.num("days_after_due"))
	}
}
