package httpapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testkit"
)

// subEnv is a payEnv with a merchant's subscription calls.
type subEnv struct {
	*payEnv
	today bizdays.Date
}

func newSubEnv(t *testing.T, dsn string) *subEnv {
	e := &subEnv{payEnv: newPayEnv(t, dsn)}
	e.today = domain.BrasiliaDate(e.clock.Now())
	return e
}

// subBody is a monthly R$ 49.90 subscription starting in five days (its
// first cycle's window open), for the journey, with twelve cycles.
func (e *subEnv) subBody(journey string) map[string]any {
	start := domain.BrasiliaDate(e.clock.Now()).AddDays(5)
	b := map[string]any{
		"customer": map[string]any{"name": "Maria Silva", "document": "529.982.247-25"},
		"amount":   4990, "interval": "monthly", "start_date": start.String(),
		"end_date": domain.CycleDate(start, domain.IntervalMonthly, 12).String(),
		"contract": "CTR-2027-001", "description": "Plano mensal", "retry_policy": "three_in_seven_days", "journey": journey,
	}
	if journey == "qr_code_with_first_payment" {
		b["first_payment"] = map[string]any{"amount": 1990}
	}
	return b
}

func (e *subEnv) create(body map[string]any) apiResp {
	e.t.Helper()
	h := testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": e.key()}
	return decodeResp(e.t, testkit.Do(e.t, "POST", e.srv.BaseURL+"/subscriptions", body, h))
}

func (e *subEnv) post(path string, body any) apiResp {
	e.t.Helper()
	return e.call("POST", path, e.acct.TestKey, body)
}

func obj(r apiResp, k string) map[string]any { m, _ := r.Body[k].(map[string]any); return m }

func (e *subEnv) eventTypes(prefix string) map[string]int {
	e.t.Helper()
	out := map[string]int{}
	cursor := ""
	for {
		path := "/events?limit=100&type=subscription.*"
		if cursor != "" {
			path += "&starting_after=" + cursor
		}
		r := e.call("GET", path, e.acct.TestKey, nil)
		e.want(r, 200, "")
		data, _ := r.Body["data"].([]any)
		for _, d := range data {
			m := d.(map[string]any)
			if t, _ := m["type"].(string); strings.HasPrefix(t, prefix) {
				out[t]++
			}
			cursor, _ = m["id"].(string)
		}
		if more, _ := r.Body["has_more"].(bool); !more {
			return out
		}
	}
}

// A monthly subscription, authorised by the payer's bank, is advanced
// through its twelve cycles: each cycle's charge is a Pix charge paid by
// debit, the wallet is credited twelve times net of fees and the ledger
// verifies; cycle 3's first debit fails and its retry pays it; after the
// twelfth the subscription is completed; every step is an event; the
// create's key is exactly-once.
func TestSubscriptionYearOfCycles(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newSubEnv(t, d.dsn(t))
			body := e.subBody("authorization_request")
			body["payer_account"] = map[string]any{"ispb": "0000000A", "branch": "0001", "number": "00012345678"}
			key := e.key()
			h := testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": key}
			created := decodeResp(t, testkit.Do(t, "POST", e.srv.BaseURL+"/subscriptions", body, h))
			e.want(created, 201, "")
			id := created.str("id")
			api := obj(created, "api_pix")
			if !strings.HasPrefix(id, "sub_") || created.str("object") != "subscription" || created.str("status") != "pending_authorization" ||
				api["rec_status"] != "CRIADA" || api["solicrec_status"] != "ENVIADA" || api["periodicidade"] != "MENSAL" ||
				api["politica_retentativa"] != "PERMITE_3R_7D" || api["jornada"] != "JORNADA_1" || created.Body["pix"] != nil {
				t.Fatalf("created: %s", created.Raw)
			}
			if rec, _ := api["rec_id"].(string); len(rec) != 29 || !strings.HasPrefix(rec, "RR") {
				t.Errorf("rec_id %q", rec)
			}
			if pa := obj(created, "payer_account"); pa["ispb"] != "0000000A" || pa["branch"] != "0001" || pa["number_last4"] != "5678" ||
				strings.Contains(string(created.Raw), "00012345678") {
				t.Errorf("payer_account shown as %v: %s", pa, created.Raw)
			}
			replay := decodeResp(t, testkit.Do(t, "POST", e.srv.BaseURL+"/subscriptions", body, h))
			if replay.Status != 201 || string(replay.Raw) != string(created.Raw) || replay.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay: %d %s", replay.Status, replay.Raw)
			}
			body["amount"] = 5000
			e.want(decodeResp(t, testkit.Do(t, "POST", e.srv.BaseURL+"/subscriptions", body, h)), 409, "idempotency_key_reused")

			e.want(e.post("/test_helpers/subscriptions/"+id+"/advance", nil), 409, "subscription_not_active")
			auth := e.post("/test_helpers/subscriptions/"+id+"/authorize", nil)
			e.want(auth, 200, "")
			if auth.str("status") != "active" || obj(auth, "api_pix")["solicrec_status"] != "ACEITA" || auth.str("authorized_at") == "" {
				t.Fatalf("authorized: %s", auth.Raw)
			}
			e.want(e.post("/test_helpers/subscriptions/"+id+"/authorize", nil), 409, "subscription_not_pending_authorization")

			var last apiResp
			for k := 1; k <= 12; k++ {
				if k == 3 {
					failed := e.post("/test_helpers/subscriptions/"+id+"/advance", map[string]any{"fail": true})
					e.want(failed, 200, "")
					lc := obj(failed, "latest_cycle")
					if lc["cycle"] != float64(3) || lc["status"] != "retrying" || lc["attempts"] != float64(2) || lc["next_debit_date"] == nil || lc["failure_code"] != "AM02" {
						t.Fatalf("cycle 3 failed once: %s", failed.Raw)
					}
				}
				last = e.post("/test_helpers/subscriptions/"+id+"/advance", nil)
				e.want(last, 200, "")
				lc := obj(last, "latest_cycle")
				if lc["cycle"] != float64(k) || lc["status"] != "paid" {
					t.Fatalf("advance %d: %s", k, last.Raw)
				}
			}
			if last.str("status") != "completed" || obj(last, "cycles")["paid"] != float64(12) || last.Body["next_cycle"] != nil ||
				last.str("ended_at") == "" {
				t.Fatalf("after twelve cycles: %s", last.Raw)
			}
			e.want(e.post("/test_helpers/subscriptions/"+id+"/advance", nil), 409, "subscription_not_active")

			fees := domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}}.Apply(4990)
			if avail, pending := e.balance("BRL"); avail != 12*fees.Net(4990) || pending != 0 {
				t.Errorf("wallet available %d pending %d, want twelve credits of %d", avail, pending, fees.Net(4990))
			}
			e.verifyLedger()

			list := e.call("GET", "/subscriptions/"+id+"/charges?limit=5", e.acct.TestKey, nil)
			e.want(list, 200, "")
			var all []map[string]any
			for {
				data, _ := list.Body["data"].([]any)
				for _, c := range data {
					all = append(all, c.(map[string]any))
				}
				next, _ := list.Body["next_cursor"].(string)
				if next == "" {
					break
				}
				list = e.call("GET", "/subscriptions/"+id+"/charges?limit=5&starting_after="+next, e.acct.TestKey, nil)
				e.want(list, 200, "")
			}
			if len(all) != 12 {
				t.Fatalf("%d charges listed, want 12", len(all))
			}
			for i, c := range all {
				sub, _ := c["subscription"].(map[string]any)
				pix, _ := c["pix"].(map[string]any)
				want := domain.CycleDate(e.today.AddDays(5), domain.IntervalMonthly, 12-i).String()
				if c["status"] != "paid" || c["amount"] != float64(4990) || sub["id"] != id || sub["cycle"] != float64(12-i) ||
					sub["due_date"] != want || pix["br_code"] != "" || pix["qr_code_url"] != nil {
					t.Errorf("charge %d: %v", i, c)
				}
				if doc := c["customer"].(map[string]any)["document"]; doc != "*********25" {
					t.Errorf("a list shows the document %v", doc)
				}
			}

			events := e.eventTypes("subscription.")
			want := map[string]int{"subscription.created": 1, "subscription.authorized": 1, "subscription.charge_scheduled": 12,
				"subscription.charge_paid": 12, "subscription.charge_retrying": 1, "subscription.completed": 1}
			for typ, n := range want {
				if events[typ] != n {
					t.Errorf("%d %s events, want %d (all: %v)", events[typ], typ, n, events)
				}
			}
			if events["subscription.charge_failed"] != 0 {
				t.Errorf("a charge_failed event for a cycle paid on retry: %v", events)
			}
		})
	}
}

// The QR journeys answer the code to scan, its image and a hosted page;
// authorising the composite code pays the first payment (a charge of its
// own, credited like any) and activates the mandate.
func TestSubscriptionQRJourneys(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newSubEnv(t, d.dsn(t))
			qr := e.create(e.subBody("qr_code"))
			e.want(qr, 201, "")
			pix := obj(qr, "pix")
			code, _ := pix["br_code"].(string)
			hosted := qr.str("hosted_url")
			if !strings.Contains(code, "80") || pix["qr_code_url"] == nil || hosted == "" || obj(qr, "api_pix")["jornada"] != "JORNADA_2" ||
				obj(qr, "api_pix")["solicrec_id"] != nil {
				t.Fatalf("qr_code: %s", qr.Raw)
			}
			page := testkit.Do(t, "GET", hosted, nil, nil)
			if page.Status != 200 || !strings.Contains(string(page.Body), code) || !strings.Contains(string(page.Body), "CTR-2027-001") ||
				strings.Contains(string(page.Body), "529.982.247-25") {
				t.Errorf("hosted page %d: %.400s", page.Status, page.Body)
			}
			img := testkit.Do(t, "GET", pix["qr_code_url"].(string), nil, nil)
			if img.Status != 200 || img.Header.Get("Content-Type") != "image/png" {
				t.Errorf("QR image %d %s", img.Status, img.Header.Get("Content-Type"))
			}
			withQR := e.call("GET", "/subscriptions/"+qr.str("id")+"?include=qr_code_base64", e.acct.TestKey, nil)
			if b64, _ := obj(withQR, "pix")["qr_code_base64"].(string); withQR.Status != 200 || len(b64) < 100 {
				t.Errorf("include=qr_code_base64: %d %.200s", withQR.Status, withQR.Raw)
			}
			e.want(e.post("/test_helpers/subscriptions/"+qr.str("id")+"/authorize", nil), 200, "")

			first := e.create(e.subBody("qr_code_with_first_payment"))
			e.want(first, 201, "")
			fp := obj(first, "first_payment")
			chargeID, _ := fp["charge"].(string)
			if fp["amount"] != float64(1990) || !strings.HasPrefix(chargeID, "ch_") || obj(first, "api_pix")["jornada"] != "JORNADA_3" {
				t.Fatalf("first payment: %s", first.Raw)
			}
			ch := e.call("GET", "/charges/"+chargeID, e.acct.TestKey, nil)
			chPix := obj(ch, "pix")
			if ch.str("status") != "pending" || ch.num("amount") != 1990 || !strings.HasPrefix(obj(first, "pix")["br_code"].(string), chPix["br_code"].(string)[:40]) {
				t.Errorf("first payment's charge: %s", ch.Raw)
			}
			if sub := obj(ch, "subscription"); sub["first_payment"] != true || sub["cycle"] != nil {
				t.Errorf("first payment's link: %v", sub)
			}
			auth := e.post("/test_helpers/subscriptions/"+first.str("id")+"/authorize", nil)
			e.want(auth, 200, "")
			if auth.str("status") != "active" {
				t.Fatalf("authorized: %s", auth.Raw)
			}
			if ch := e.call("GET", "/charges/"+chargeID, e.acct.TestKey, nil); ch.str("status") != "paid" {
				t.Errorf("the first payment is %s after the payer authorised", ch.str("status"))
			}
			fees := domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}}.Apply(1990)
			if avail, _ := e.balance("BRL"); avail != fees.Net(1990) {
				t.Errorf("available %d, want the first payment's %d", avail, fees.Net(1990))
			}
			e.verifyLedger()

			// The worker creates the first cycle's charge (its window is
			// open) for each active subscription.
			e.srv.RunWorkers(t)
			for _, id := range []string{qr.str("id"), first.str("id")} {
				g := e.call("GET", "/subscriptions/"+id, e.acct.TestKey, nil)
				if lc := obj(g, "latest_cycle"); lc["cycle"] != float64(1) || lc["status"] != "scheduled" || obj(g, "next_cycle")["cycle"] != float64(2) {
					t.Errorf("after the worker: %s", g.Raw)
				}
			}
		})
	}
}

// A payer who revokes the mandate mid-year ends it: cancelled by the
// payer, its open cycle cancelled with its charge, and no cycle after,
// however much time passes.
func TestSubscriptionRevokedByThePayer(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newSubEnv(t, d.dsn(t))
			r := e.create(e.subBody("authorization_request"))
			id := r.str("id")
			e.want(e.post("/test_helpers/subscriptions/"+id+"/revoke", nil), 409, "subscription_not_active")
			e.want(e.post("/test_helpers/subscriptions/"+id+"/authorize", nil), 200, "")
			for range 5 {
				e.want(e.post("/test_helpers/subscriptions/"+id+"/advance", nil), 200, "")
			}
			// Cycle 6's first debit fails: it stays open, its retry due.
			g := e.post("/test_helpers/subscriptions/"+id+"/advance", map[string]any{"fail": true})
			lc := obj(g, "latest_cycle")
			if lc["cycle"] != float64(6) || lc["status"] != "retrying" {
				t.Fatalf("before the revocation: %s", g.Raw)
			}
			open, _ := lc["charge"].(string)

			rev := e.post("/test_helpers/subscriptions/"+id+"/revoke", nil)
			e.want(rev, 200, "")
			if rev.str("status") != "cancelled" || rev.str("cancelled_by") != "payer" || obj(rev, "api_pix")["rec_status"] != "CANCELADA" ||
				obj(rev, "cycles")["paid"] != float64(5) || obj(rev, "cycles")["open"] != float64(0) || rev.Body["next_cycle"] != nil {
				t.Fatalf("revoked: %s", rev.Raw)
			}
			if ch := e.call("GET", "/charges/"+open, e.acct.TestKey, nil); ch.str("status") != "cancelled" {
				t.Errorf("the open cycle's charge is %s", ch.str("status"))
			}
			e.want(e.post("/test_helpers/subscriptions/"+id+"/advance", nil), 409, "subscription_not_active")
			e.want(e.post("/subscriptions/"+id+"/cancel", nil), 409, "subscription_not_cancellable")
			if ev := e.eventTypes("subscription.cancelled"); ev["subscription.cancelled"] != 1 {
				t.Errorf("cancelled events %v", ev)
			}
			e.srv.Advance(t, 400*24*time.Hour)
			list := e.call("GET", "/subscriptions/"+id+"/charges?limit=100", e.acct.TestKey, nil)
			if data, _ := list.Body["data"].([]any); len(data) != 6 {
				t.Errorf("%d charges a year after the revocation, want the 6 before it", len(data))
			}
			e.verifyLedger()
		})
	}
}

// The schedule is the worker's: a cycle's charge is created when its
// window opens, ten days before its due date, never before; without the
// payer's authorisation by its deadline the mandate expires.
func TestSubscriptionWorkerWindow(t *testing.T) {
	t.Parallel()
	e := newSubEnv(t, "")
	body := e.subBody("authorization_request")
	start := e.today.AddDays(20)
	body["start_date"], body["end_date"] = start.String(), start.String()
	body["retry_policy"] = "none"
	r := e.create(body)
	id := r.str("id")
	e.want(e.post("/test_helpers/subscriptions/"+id+"/authorize", nil), 200, "")
	e.srv.RunWorkers(t)
	if g := e.call("GET", "/subscriptions/"+id, e.acct.TestKey, nil); g.Body["latest_cycle"] != nil {
		t.Fatalf("a charge 20 days before its due date: %s", g.Raw)
	}
	// To the day before the window opens (11 days before), then into it.
	e.clock.Advance(domain.EndOfBrasiliaDay(start.AddDays(-11)).Sub(e.clock.Now()) - time.Minute)
	e.srv.RunWorkers(t)
	if g := e.call("GET", "/subscriptions/"+id, e.acct.TestKey, nil); g.Body["latest_cycle"] != nil {
		t.Fatalf("a charge 11 days before its due date: %s", g.Raw)
	}
	e.srv.Advance(t, 2*time.Minute)
	g := e.call("GET", "/subscriptions/"+id, e.acct.TestKey, nil)
	lc := obj(g, "latest_cycle")
	if lc["cycle"] != float64(1) || lc["due_date"] != start.String() {
		t.Fatalf("the window opened: %s", g.Raw)
	}
	ch := e.call("GET", "/charges/"+lc["charge"].(string), e.acct.TestKey, nil)
	if at, _ := time.Parse(time.RFC3339Nano, obj(ch, "pix")["expires_at"].(string)); !at.Equal(domain.EndOfBrasiliaDay(domain.FirstDebitDate(start))) {
		t.Errorf("the cycle's charge expires at %v, want the end of its debit day", at)
	}
	// No debit comes (the sandbox's bank debits only through advance): the
	// charge expires after its debit day, and the cycle fails with it.
	e.srv.Advance(t, domain.EndOfBrasiliaDay(domain.FirstDebitDate(start)).Sub(e.clock.Now())+time.Hour)
	g = e.call("GET", "/subscriptions/"+id, e.acct.TestKey, nil)
	if obj(g, "latest_cycle")["status"] != "failed" || g.str("status") != "completed" || obj(g, "cycles")["failed"] != float64(1) {
		t.Errorf("after the debit day: %s", g.Raw)
	}
	if ev := e.eventTypes("subscription.charge_failed"); ev["subscription.charge_failed"] != 1 {
		t.Errorf("charge_failed events %v", ev)
	}

	late := e.create(e.subBody("qr_code"))
	e.srv.Advance(t, 6*24*time.Hour)
	if g := e.call("GET", "/subscriptions/"+late.str("id"), e.acct.TestKey, nil); g.str("status") != "expired" {
		t.Errorf("not authorised by its deadline: %s", g.str("status"))
	}
	e.want(e.post("/test_helpers/subscriptions/"+late.str("id")+"/authorize", nil), 409, "subscription_not_pending_authorization")
}

// Every bad input is a 400 naming its field; state conflicts are 409 or
// 422 with their codes; live keys see no test helper; a variable
// subscription takes its next cycle's amount up to its max_amount.
func TestSubscriptionInputsAndStates(t *testing.T) {
	t.Parallel()
	e := newSubEnv(t, "")
	tests := []struct {
		name  string
		edit  func(b map[string]any)
		code  string
		param string
	}{
		{"no customer", func(b map[string]any) { delete(b, "customer") }, "parameter_missing", "customer.name"},
		{"bad document", func(b map[string]any) { b["customer"] = map[string]any{"name": "A", "document": "123"} }, "parameter_invalid", "customer.document"},
		{"customer email", func(b map[string]any) { b["customer"] = map[string]any{"name": "A", "email": "a@b.co"} }, "parameter_unknown", "customer.email"},
		{"no amount", func(b map[string]any) { delete(b, "amount") }, "parameter_missing", "amount"},
		{"amount and variable", func(b map[string]any) { b["variable"] = map[string]any{} }, "parameter_invalid", "variable"},
		{"amount zero", func(b map[string]any) { b["amount"] = 0 }, "parameter_invalid", "amount"},
		{"amount as text", func(b map[string]any) { b["amount"] = "10" }, "parameter_invalid", "amount"},
		{"max_amount", func(b map[string]any) { delete(b, "amount"); b["variable"] = map[string]any{"max_amount": -1} }, "parameter_invalid", "variable.max_amount"},
		{"interval", func(b map[string]any) { b["interval"] = "daily" }, "parameter_invalid", "interval"},
		{"no interval", func(b map[string]any) { delete(b, "interval") }, "parameter_missing", "interval"},
		{"no start_date", func(b map[string]any) { delete(b, "start_date") }, "parameter_missing", "start_date"},
		{"start_date format", func(b map[string]any) { b["start_date"] = "31/01/2027" }, "parameter_invalid", "start_date"},
		{"start_date tomorrow", func(b map[string]any) { b["start_date"] = e.today.AddDays(1).String() }, "parameter_invalid", "start_date"},
		{"end_date before start", func(b map[string]any) { b["end_date"] = e.today.AddDays(4).String() }, "parameter_invalid", "end_date"},
		{"no contract", func(b map[string]any) { delete(b, "contract") }, "parameter_missing", "contract"},
		{"contract of 36", func(b map[string]any) { b["contract"] = strings.Repeat("c", 36) }, "parameter_invalid", "contract"},
		{"description of 36", func(b map[string]any) { b["description"] = strings.Repeat("d", 36) }, "parameter_invalid", "description"},
		{"retry_policy", func(b map[string]any) { b["retry_policy"] = "PERMITE_3R_7D" }, "parameter_invalid", "retry_policy"},
		{"journey", func(b map[string]any) { b["journey"] = "pix" }, "parameter_invalid", "journey"},
		{"first_payment without its journey", func(b map[string]any) { b["first_payment"] = map[string]any{"amount": 100} }, "parameter_invalid", "first_payment.amount"},
		{"first_payment without amount", func(b map[string]any) {
			b["journey"], b["first_payment"] = "qr_code_with_first_payment", map[string]any{}
		}, "parameter_missing", "first_payment.amount"},
		{"payer_account with a QR journey", func(b map[string]any) {
			b["journey"], b["payer_account"] = "qr_code", map[string]any{"ispb": "99999997", "branch": "0001", "number": "998877"}
		}, "parameter_invalid", "payer_account"},
		{"payer_account.ispb", func(b map[string]any) {
			b["payer_account"] = map[string]any{"ispb": "9999-997", "branch": "0001", "number": "998877"}
		}, "parameter_invalid", "payer_account.ispb"},
		{"payer_account.branch", func(b map[string]any) {
			b["payer_account"] = map[string]any{"ispb": "99999997", "number": "998877"}
		}, "parameter_missing", "payer_account.branch"},
		{"payer_account.number", func(b map[string]any) {
			b["payer_account"] = map[string]any{"ispb": "99999997", "branch": "0001", "number": "99887766554433221100X"}
		}, "parameter_invalid", "payer_account.number"},
		{"payer_account member", func(b map[string]any) {
			b["payer_account"] = map[string]any{"ispb": "99999997", "branch": "0001", "number": "998877", "type": "CORRENTE"}
		}, "parameter_unknown", "payer_account.type"},
		{"unknown field", func(b map[string]any) { b["metadata"] = map[string]any{} }, "parameter_unknown", "metadata"},
	}
	for _, tc := range tests {
		b := e.subBody("authorization_request")
		tc.edit(b)
		r := e.create(b)
		if r.Status != 400 || r.code() != tc.code || r.param() != tc.param {
			t.Errorf("%s: %d %s %q, want 400 %s %q: %.300s", tc.name, r.Status, r.code(), r.param(), tc.code, tc.param, r.Raw)
		}
		if strings.Contains(string(r.Raw), "529.982.247-25") {
			t.Errorf("%s: the error repeats the document", tc.name)
		}
	}
	if r := e.call("POST", "/subscriptions", e.acct.TestKey, e.subBody("qr_code")); r.Status != 400 || r.code() != "idempotency_key_missing" {
		t.Errorf("no Idempotency-Key: %d %s", r.Status, r.code())
	}
	if list := e.call("GET", "/subscriptions", e.acct.TestKey, nil); len(list.Body["data"].([]any)) != 0 {
		t.Fatalf("a refused create was kept: %s", list.Raw)
	}

	sub := e.create(e.subBody("authorization_request"))
	id := sub.str("id")
	for _, h := range []string{"authorize", "reject", "revoke", "advance"} {
		e.want(e.call("POST", "/test_helpers/subscriptions/"+id+"/"+h, e.acct.LiveKey, nil), 404, "resource_not_found")
	}
	e.want(e.call("GET", "/subscriptions/"+id, e.acct.LiveKey, nil), 404, "resource_not_found")
	e.want(e.call("GET", "/subscriptions/sub_nope", e.acct.TestKey, nil), 404, "resource_not_found")
	e.want(e.post("/subscriptions/"+id+"/charges", map[string]any{"amount": 100}), 422, "subscription_not_variable")
	rej := e.post("/test_helpers/subscriptions/"+id+"/reject", nil)
	if rej.Status != 200 || rej.str("status") != "rejected" || obj(rej, "api_pix")["solicrec_status"] != "REJEITADA" {
		t.Errorf("rejected: %s", rej.Raw)
	}
	e.want(e.post("/subscriptions/"+id+"/cancel", nil), 409, "subscription_not_cancellable")

	vb := e.subBody("authorization_request")
	delete(vb, "amount")
	vb["variable"] = map[string]any{"max_amount": 20000}
	v := e.create(vb)
	e.want(v, 201, "")
	vid := v.str("id")
	if v.Body["amount"] != nil || obj(v, "variable")["max_amount"] != float64(20000) || obj(v, "next_cycle")["amount"] != nil {
		t.Fatalf("variable: %s", v.Raw)
	}
	e.want(e.post("/test_helpers/subscriptions/"+vid+"/authorize", nil), 200, "")
	e.want(e.post("/test_helpers/subscriptions/"+vid+"/advance", nil), 409, "cycle_amount_not_set")
	wantParam(t, e.post("/subscriptions/"+vid+"/charges", map[string]any{"amount": 20001}), 400, "parameter_invalid", "amount")
	wantParam(t, e.post("/subscriptions/"+vid+"/charges", map[string]any{}), 400, "parameter_missing", "amount")
	set := e.post("/subscriptions/"+vid+"/charges", map[string]any{"amount": 12345})
	if set.Status != 200 || obj(set, "next_cycle")["amount"] != float64(12345) {
		t.Fatalf("set amount: %s", set.Raw)
	}
	adv := e.post("/test_helpers/subscriptions/"+vid+"/advance", nil)
	if lc := obj(adv, "latest_cycle"); adv.Status != 200 || lc["amount"] != float64(12345) || lc["status"] != "paid" ||
		obj(adv, "next_cycle")["amount"] != nil {
		t.Fatalf("variable cycle: %s", adv.Raw)
	}
	canc := e.post("/subscriptions/"+vid+"/cancel", nil)
	if canc.str("status") != "cancelled" || canc.str("cancelled_by") != "merchant" {
		t.Errorf("cancelled: %s", canc.Raw)
	}
	e.want(e.post("/subscriptions/"+vid+"/charges", map[string]any{"amount": 100}), 409, "subscription_not_active")

	list := e.call("GET", "/subscriptions?limit=1", e.acct.TestKey, nil)
	e.want(list, 200, "")
	var page struct {
		Data       []domain.PublicSubscription `json:"data"`
		HasMore    bool                        `json:"has_more"`
		NextCursor string                      `json:"next_cursor"`
	}
	if err := json.Unmarshal(list.Raw, &page); err != nil || len(page.Data) != 1 || !page.HasMore || page.Data[0].Customer.Document != "*********25" ||
		page.Data[0].ID != vid || page.NextCursor != "sub_"+strings.TrimPrefix(vid, "sub_") {
		t.Fatalf("list: %v %s", err, list.Raw)
	}
	next := e.call("GET", "/subscriptions?limit=1&starting_after="+page.NextCursor, e.acct.TestKey, nil)
	if data, _ := next.Body["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id || next.Body["has_more"] != false {
		t.Errorf("second page: %s", next.Raw)
	}
	wantParam(t, e.call("GET", "/subscriptions?status=paused", e.acct.TestKey, nil), 400, "parameter_invalid", "status")
	wantParam(t, e.call("GET", "/subscriptions?starting_after=ch_x", e.acct.TestKey, nil), 400, "parameter_invalid", "starting_after")
	if f := e.call("GET", "/subscriptions?status=rejected", e.acct.TestKey, nil); len(f.Body["data"].([]any)) != 1 {
		t.Errorf("status filter: %s", f.Raw)
	}
}

// A cycle's charge is a Pix charge like any: it can be refunded, has a
// receipt once paid, and the payer's PSP can take money back under the
// MED of Pix Automático (MED_PIX_AUTOMATICO), which no other charge takes;
// the wallet and the ledger follow.
func TestSubscriptionCycleChargeIsAnyPix(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newSubEnv(t, d.dsn(t))
			id := e.create(e.subBody("authorization_request")).str("id")
			e.want(e.post("/test_helpers/subscriptions/"+id+"/authorize", nil), 200, "")
			var charges []string
			for range 2 {
				adv := e.post("/test_helpers/subscriptions/"+id+"/advance", nil)
				e.want(adv, 200, "")
				charges = append(charges, obj(adv, "latest_cycle")["charge"].(string))
			}
			tx := func(ch string) string { return "tx_" + strings.TrimPrefix(ch, "ch_") }
			rc := e.call("GET", "/payments/"+tx(charges[0])+"/receipt", e.acct.TestKey, nil)
			e.want(rc, 200, "")
			e.want(e.call("POST", "/payments/"+tx(charges[0])+"/refund", e.acct.TestKey,
				map[string]any{"idempotencyKey": e.key(), "amount": 1000}), 201, "")
			e.advanceRefunds()
			med := e.post("/test_helpers/charges/"+charges[1]+"/med_return", map[string]any{"reason": "pix_automatico", "amount": 990})
			e.want(med, 200, "")
			if med.str("status") != "disputed" {
				t.Errorf("after the MED return: %s", med.Raw)
			}
			if ds, _ := med.Body["disputes"].([]any); len(ds) != 1 || ds[0].(map[string]any)["reason"] != "pix_automatico" {
				t.Errorf("disputes %v", med.Body["disputes"])
			}
			fees := domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}}.Apply(4990)
			if avail, _ := e.balance("BRL"); avail != 2*fees.Net(4990)-1000-990 {
				t.Errorf("available %d, want two credits less the refund and the MED return", avail)
			}
			e.verifyLedger()
			one := e.createCharge(map[string]any{"amount": 500, "payment_method": "pix"})
			e.payPix(one.str("id"))
			wantParam(t, e.post("/test_helpers/charges/"+one.str("id")+"/med_return", map[string]any{"reason": "pix_automatico"}),
				400, "parameter_invalid", "reason")
			if g := e.call("GET", "/subscriptions/"+id, e.acct.TestKey, nil); obj(g, "cycles")["paid"] != float64(2) {
				t.Errorf("the subscription after a refund and a MED return: %s", g.Raw)
			}
		})
	}
}

func (e *subEnv) createCharge(body map[string]any) apiResp {
	e.t.Helper()
	h := testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": e.key()}
	return decodeResp(e.t, testkit.Do(e.t, "POST", e.srv.BaseURL+"/charges", body, h))
}

// The subscription.* events are delivered like the charge.* ones: to the
// endpoints subscribed to them, signed with the endpoint's secret, the
// subscription as data.object.
func TestSubscriptionEventsAreDelivered(t *testing.T) {
	t.Parallel()
	e := newSubEnv(t, "")
	rc := newWHReceiver(t)
	ep := e.post("/webhooks/endpoints", map[string]any{"url": rc.srv.URL, "events": []string{"subscription.created",
		"subscription.authorized", "subscription.charge_scheduled", "subscription.charge_paid"}})
	e.want(ep, 201, "")
	rc.mu.Lock()
	rc.secret = ep.str("secret")
	rc.mu.Unlock()
	id := e.create(e.subBody("authorization_request")).str("id")
	e.want(e.post("/test_helpers/subscriptions/"+id+"/authorize", nil), 200, "")
	e.want(e.post("/test_helpers/subscriptions/"+id+"/advance", nil), 200, "")
	e.srv.FlushWebhooks(t)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var types []string
	for _, b := range rc.bodies {
		var env struct {
			Type string `json:"type"`
			Data struct {
				Object struct {
					ID     string `json:"id"`
					Object string `json:"object"`
				} `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &env); err != nil || env.Data.Object.ID != id || env.Data.Object.Object != "subscription" {
			t.Errorf("delivery %s: %v", b, err)
		}
		types = append(types, env.Type)
	}
	want := []string{"subscription.authorized", "subscription.charge_paid", "subscription.charge_scheduled", "subscription.created"}
	slices.Sort(types) // deliveries run concurrently: any order
	if rc.bad != 0 || !slices.Equal(types, want) {
		t.Errorf("delivered %v (%d badly signed), want %v", types, rc.bad, want)
	}
}
