package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testkit"
)

// dueEnv is a payEnv with the days of one due-date charge's terms: created
// today in Brasília, due in ten days, payable five more.
type dueEnv struct {
	*payEnv
	today, due, effDue, last bizdays.Date
}

func newDueEnv(t *testing.T, dsn string) *dueEnv {
	e := &dueEnv{payEnv: newPayEnv(t, dsn)}
	e.today = domain.BrasiliaDate(e.clock.Now())
	e.due = e.today.AddDays(10)
	e.effDue = bizdays.NextBusinessDay(e.due)
	e.last = bizdays.NextBusinessDay(e.effDue.AddDays(5))
	return e
}

// body is a create request for R$ 100.00 with every rule: R$ 1.00 off
// always, R$ 3.00 off until today, a R$ 2.00 fine and R$ 0.10 a day late.
func (e *dueEnv) body() map[string]any {
	return map[string]any{
		"amount": 10000, "payment_method": "pix",
		"customer":       map[string]any{"name": "Maria Silva", "document": "529.982.247-25"},
		"due_date":       e.due.String(),
		"days_after_due": 5,
		"fine":           map[string]any{"type": "fixed", "amount": 200},
		"interest":       map[string]any{"type": "amount_per_day", "amount": 10},
		"discount":       map[string]any{"type": "fixed_until", "until": []any{map[string]any{"date": e.today.String(), "amount": 300}}},
		"abatement":      map[string]any{"type": "fixed", "amount": 100},
	}
}

func (e *dueEnv) createCharge(body map[string]any) apiResp {
	e.t.Helper()
	h := testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": e.key()}
	r := testkit.Do(e.t, "POST", e.srv.BaseURL+"/charges", body, h)
	return decodeResp(e.t, r)
}

func decodeResp(t testing.TB, r *testkit.Response) apiResp {
	t.Helper()
	out := apiResp{Status: r.Status, Header: r.Header, Raw: r.Body}
	if err := json.Unmarshal(r.Body, &out.Body); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return out
}

// A due-date charge is created with its terms shown on the charge, expires
// at the end of its last payable day in Brasília, and answers its amount
// due for any day from today to that day; an immediate charge shows none
// of the due-date members.
func TestDueDateChargeCreateAndAmountDue(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			r := e.createCharge(e.body())
			e.want(r, 201, "")
			if r.str("due_date") != e.due.String() || r.num("days_after_due") != 5 {
				t.Errorf("charge shows due_date %q days_after_due %d: %s", r.str("due_date"), r.num("days_after_due"), r.Raw)
			}
			for _, m := range []string{`"fine":{"type":"fixed","amount":200}`, `"interest":{"type":"amount_per_day","amount":10}`,
				`"discount":{"type":"fixed_until","until":[{"date":"` + e.today.String() + `","amount":300}]}`,
				`"abatement":{"type":"fixed","amount":100}`} {
				if !strings.Contains(string(r.Raw), m) {
					t.Errorf("charge lacks %s: %s", m, r.Raw)
				}
			}
			pix, _ := r.Body["pix"].(map[string]any)
			expires, _ := pix["expires_at"].(string)
			if at, err := time.Parse(time.RFC3339Nano, expires); err != nil || !at.Equal(domain.EndOfBrasiliaDay(e.last)) {
				t.Errorf("pix.expires_at %q, want the end of %s in Brasília", expires, e.last)
			}
			id := r.str("id")
			get := e.call("GET", "/charges/"+id, e.acct.TestKey, nil)
			e.want(get, 200, "")
			if get.str("due_date") != e.due.String() {
				t.Errorf("read shows due_date %q", get.str("due_date"))
			}

			path := "/charges/" + id + "/amount_due"
			for _, tc := range []struct {
				query string
				want  map[string]int64
			}{
				{"", map[string]int64{"amount_due": 9600, "original": 10000, "discount": 300, "abatement": 100}},
				{"?date=" + e.effDue.String(), map[string]int64{"amount_due": 9900, "abatement": 100}},
				{"?date=" + e.effDue.AddDays(2).String(), map[string]int64{"amount_due": 10120, "fine": 200, "interest": 20, "abatement": 100}},
			} {
				got := e.call("GET", path+tc.query, e.acct.TestKey, nil)
				e.want(got, 200, "")
				for _, k := range []string{"amount_due", "fine", "interest", "discount", "abatement"} {
					if got.num(k) != tc.want[k] {
						t.Errorf("amount_due%s: %s = %d, want %d: %s", tc.query, k, got.num(k), tc.want[k], got.Raw)
					}
				}
			}
			if got := e.call("GET", path, e.acct.TestKey, nil); got.str("date") != e.today.String() {
				t.Errorf("amount_due without date answers for %q, want today in Brasília %s", got.str("date"), e.today)
			}
			e.want(e.call("GET", path+"?date="+e.last.AddDays(1).String(), e.acct.TestKey, nil), 422, "charge_overdue_closed")
			wantParam(t, e.call("GET", path+"?date="+e.today.AddDays(-1).String(), e.acct.TestKey, nil), 400, "parameter_invalid", "date")
			wantParam(t, e.call("GET", path+"?date=2026-02-30", e.acct.TestKey, nil), 400, "parameter_invalid", "date")
			e.want(e.call("GET", "/charges/ch_"+strings.Repeat("z", 26)+"/amount_due", e.acct.TestKey, nil), 404, "resource_not_found")

			plain := e.createCharge(map[string]any{"amount": 500, "payment_method": "pix"})
			e.want(plain, 201, "")
			for _, m := range []string{"due_date", "days_after_due", "fine", "interest", "discount", "abatement"} {
				if _, ok := plain.Body[m]; ok {
					t.Errorf("an immediate charge shows %s: %s", m, plain.Raw)
				}
			}
			e.want(e.call("GET", "/charges/"+plain.str("id")+"/amount_due", e.acct.TestKey, nil), 422, "charge_not_due_date")
		})
	}
}

// Every refusal of a due-date create is a 400 in the envelope naming the
// parameter as the request spells it.
func TestDueDateChargeRefusals(t *testing.T) {
	t.Parallel()
	e := newDueEnv(t, "")
	for _, tc := range []struct {
		name  string
		edit  func(map[string]any)
		code  string
		param string
	}{
		{"bad due_date", func(b map[string]any) { b["due_date"] = "30/11/2026" }, "parameter_invalid", "due_date"},
		{"due_date in the past", func(b map[string]any) { b["due_date"] = e.today.AddDays(-1).String(); delete(b, "discount") }, "parameter_invalid", "due_date"},
		{"with expires_in", func(b map[string]any) { b["expires_in"] = 600 }, "parameter_invalid", "expires_in"},
		{"no customer.document", func(b map[string]any) { b["customer"] = map[string]any{"name": "Maria"} }, "parameter_missing", "customer.document"},
		{"invalid customer.document", func(b map[string]any) {
			b["customer"] = map[string]any{"name": "Maria", "document": "12345678900"}
		}, "parameter_invalid", "customer.document"},
		{"no customer.name", func(b map[string]any) { b["customer"] = map[string]any{"document": "52998224725"} }, "parameter_missing", "customer.name"},
		{"negative days_after_due", func(b map[string]any) { b["days_after_due"] = -1 }, "parameter_invalid", "days_after_due"},
		{"rule without due_date", func(b map[string]any) { delete(b, "due_date") }, "parameter_invalid", "days_after_due"},
		{"unknown fine member", func(b map[string]any) {
			b["fine"] = map[string]any{"type": "fixed", "amount": 200, "business_days": true}
		}, "parameter_unknown", "fine.business_days"},
		{"fine rate with one decimal", func(b map[string]any) { b["fine"] = map[string]any{"type": "percent", "rate": "2.0"} }, "parameter_invalid", "fine"},
		{"interest amount where a rate goes", func(b map[string]any) {
			b["interest"] = map[string]any{"type": "percent_per_month", "amount": 10}
		}, "parameter_invalid", "interest"},
		{"rate as a number", func(b map[string]any) { b["abatement"] = map[string]any{"type": "percent", "rate": 2.5} }, "parameter_invalid", "abatement.rate"},
		{"discount tier after the due date", func(b map[string]any) {
			b["discount"] = map[string]any{"type": "fixed_until", "until": []any{
				map[string]any{"date": e.today.String(), "amount": 300}, map[string]any{"date": e.due.AddDays(1).String(), "amount": 100}}}
		}, "parameter_invalid", "discount.until[1]"},
		{"bad discount tier date", func(b map[string]any) {
			b["discount"] = map[string]any{"type": "fixed_until", "until": []any{map[string]any{"date": "tomorrow", "amount": 300}}}
		}, "parameter_invalid", "discount.until[0].date"},
		{"abatement of the whole amount", func(b map[string]any) { b["abatement"] = map[string]any{"type": "fixed", "amount": 10000} }, "parameter_invalid", "abatement"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.body()
			tc.edit(b)
			wantParam(t, e.createCharge(b), 400, tc.code, tc.param)
		})
	}
}

// The sandbox pays a due-date charge for the amount due on the day the pay
// helper names: late with the fine and interest, early with the discount.
// The charge's paid block, the ledger's credit and the fees count from the
// amount paid; another amount is a wrong amount (the charge stays pending);
// and a charge nobody pays expires after its last payable day.
func TestDueDateChargeSettlesInTheSandbox(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			pay := func(id string, body map[string]any) apiResp {
				return e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, body)
			}
			late := e.createCharge(e.body())
			e.want(late, 201, "")
			lateDay := e.effDue.AddDays(2).String()
			// The original amount on a late day is a wrong amount.
			wrong := pay(late.str("id"), map[string]any{"date": lateDay, "amount": 10000})
			e.want(wrong, 200, "")
			if wrong.str("status") != "pending" {
				t.Fatalf("paid the original amount late: status %q, want pending", wrong.str("status"))
			}
			paid := pay(late.str("id"), map[string]any{"date": lateDay})
			e.want(paid, 200, "")
			if !strings.Contains(string(paid.Raw), `"paid":{"date":"`+lateDay+`","amount":10120,"original":10000,"fine":200,"interest":20,"discount":0,"abatement":100}`) {
				t.Errorf("paid late: %s", paid.Raw)
			}
			if paid.str("status") != "paid" || paid.num("amount") != 10000 {
				t.Errorf("paid late: status %q amount %d, want paid and the original 10000", paid.str("status"), paid.num("amount"))
			}
			credited := e.wantCredited(late.str("id"), 10120)
			txID := "tx_" + strings.TrimPrefix(late.str("id"), "ch_")
			receipt := testkit.PDFText(t, receiptPDF(t, e.payEnv, "/payments/"+txID+"/receipt", e.acct.TestKey, "comprovante-"+txID+".pdf"))
			wantReceiptText(t, receipt, "R$ 101,20", "Valor original", "R$ 100,00", "Abatimento", "Multa", "+ R$ 2,00", "Juros", "+ R$ 0,20")

			early := e.createCharge(e.body())
			e.want(early, 201, "")
			paid = pay(early.str("id"), nil)
			e.want(paid, 200, "")
			if !strings.Contains(string(paid.Raw), `"paid":{"date":"`+e.today.String()+`","amount":9600,"original":10000,"fine":0,"interest":0,"discount":300,"abatement":100}`) {
				t.Errorf("paid early: %s", paid.Raw)
			}
			credited += e.wantCredited(early.str("id"), 9600)
			e.verifyLedger()
			if avail, pending := e.balance("BRL"); avail+pending != credited {
				t.Errorf("wallet holds %d + %d, want the two payments' net %d", avail, pending, credited)
			}

			open := e.createCharge(e.body())
			e.want(open, 201, "")
			wantParam(t, pay(open.str("id"), map[string]any{"date": e.today.AddDays(-1).String()}), 400, "parameter_invalid", "date")
			wantParam(t, pay(open.str("id"), map[string]any{"date": "2026-13-01"}), 400, "parameter_invalid", "date")
			e.want(pay(open.str("id"), map[string]any{"date": e.last.AddDays(1).String()}), 409, "charge_expired")
			plain := e.createCharge(map[string]any{"amount": 500, "payment_method": "pix"})
			wantParam(t, pay(plain.str("id"), map[string]any{"date": e.today.String()}), 400, "parameter_invalid", "date")

			// Past the end of the last payable day in Brasília (and the
			// expiry grace) the unpaid charge expires.
			e.srv.Advance(t, domain.EndOfBrasiliaDay(e.last).Sub(e.clock.Now())+time.Hour)
			got := e.call("GET", "/charges/"+open.str("id"), e.acct.TestKey, nil)
			if got.str("status") != "expired" {
				t.Errorf("after the last payable day the charge reads %q, want expired", got.str("status"))
			}
		})
	}
}

// wantCredited checks that the payment of charge id (ch_) credited amount:
// the transaction reads it as its amount, and its fees and net count from
// it.
func (e *dueEnv) wantCredited(id string, amount int64) (net int64) {
	e.t.Helper()
	tx := e.call("GET", "/payments/tx_"+strings.TrimPrefix(id, "ch_"), e.acct.TestKey, nil)
	e.want(tx, 200, "")
	if net := tx.num("netAmount"); tx.num("amount") != amount || net <= 0 || net != amount-tx.num("providerFee")-tx.num("platformFee") {
		e.t.Errorf("charge %s: netAmount %d, want %d less the fees (%d, %d): %s", id, net, amount, tx.num("providerFee"), tx.num("platformFee"), tx.Raw)
	}
	return tx.num("netAmount")
}

// A due-date charge still unpaid after its due date gets one
// charge.overdue, the day after the (effective) due date in Brasília,
// whatever the workers' runs; one paid before it gets none.
func TestDueDateChargeOverdueNotice(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			open := e.createCharge(e.body())
			e.want(open, 201, "")
			paid := e.createCharge(e.body())
			e.want(paid, 201, "")
			e.want(e.call("POST", "/test_helpers/charges/"+paid.str("id")+"/pay", e.acct.TestKey, nil), 200, "")
			overdue := func() []string {
				t.Helper()
				list := e.call("GET", "/events?type=charge.overdue", e.acct.TestKey, nil)
				e.want(list, 200, "")
				var ids []string
				for _, ev := range list.Body["data"].([]any) {
					obj := ev.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
					ids = append(ids, obj["id"].(string)+" "+obj["status"].(string))
				}
				return ids
			}
			dueEnds := domain.EndOfBrasiliaDay(e.effDue)
			e.srv.Advance(t, dueEnds.Add(-time.Minute).Sub(e.clock.Now()))
			if got := overdue(); len(got) != 0 {
				t.Fatalf("on the due date: charge.overdue for %v, want none", got)
			}
			e.srv.Advance(t, 2*time.Minute)
			want := []string{open.str("id") + " pending"}
			if got := overdue(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("the day after the due date: charge.overdue for %v, want %v", got, want)
			}
			e.srv.Advance(t, 24*time.Hour)
			if got := overdue(); len(got) != 1 {
				t.Errorf("a day later: charge.overdue for %v, want the one notice", got)
			}
			// Still payable, with the fine and interest.
			late := e.call("POST", "/test_helpers/charges/"+open.str("id")+"/pay", e.acct.TestKey, nil)
			e.want(late, 200, "")
			if late.str("status") != "paid" || !strings.Contains(string(late.Raw), `"fine":200`) {
				t.Errorf("paid after the notice: %s", late.Raw)
			}
		})
	}
}
