package httpapi_test

import (
	"testing"
)

// TestSplitPayments: POST /v1/payments takes splits and feePayer with the
// validation and the rule of POST /v1/charges; the create answers the
// payments format's create fields only; GET /v1/payments/{id} and the list
// show the splits in that format (feePayer, upper-case statuses), pending,
// then paid with each share, or cancelled; a paid split payment credits
// each seller its share and the platform the rest; refusals name the
// payments format's params. Both databases.
func TestSplitPayments(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			a, b := e.newSeller("Vendedor A"), e.newSeller("Vendedor B")
			create := func(body map[string]any, acct string) apiResp {
				if body["paymentMethods"] == nil {
					body["paymentMethods"] = []string{"PIX"}
				}
				body["idempotencyKey"] = e.key()
				return e.as("POST", "/payments", e.acct.TestKey, acct, body)
			}
			read := func(id string) apiResp {
				g := e.as("GET", "/payments/"+id, e.acct.TestKey, "", nil)
				e.want(g, 200, "")
				return g
			}

			// 10000 by Pix: 99 in fees, net 9901. A fixed 3000 and 12.50 %
			// of 9901 = 1237.625 → 1237; the platform 5664.
			c := create(map[string]any{"amount": 10000, "splits": []any{
				map[string]any{"account": a, "amount": 3000},
				map[string]any{"account": b, "percent": "12.50"},
			}}, "")
			e.want(c, 201, "")
			if _, ok := c.Body["splits"]; ok || c.Body["feePayer"] != nil || c.str("status") != "WAITING_PAYMENT" {
				t.Errorf("the create answers the payments format's create fields only: %s", c.Raw)
			}
			id := c.str("id")
			wantSplits(t, read(id), "platform", []splitWant{{a, 3000, "", "PENDING"}, {b, -1, "12.50", "PENDING"}})
			l := e.as("GET", "/payments?limit=1", e.acct.TestKey, "", nil)
			if data, _ := l.Body["data"].([]any); l.Status != 200 || len(data) != 1 || !contains(l.Raw, `"feePayer":"platform"`) ||
				!contains(l.Raw, `"splits":[{"account":"`+a+`","amount":3000,"status":"PENDING","amountReversed":0}`) {
				t.Errorf("list: %s", l.Raw)
			}

			e.payPix(id)
			paid := read(id)
			if paid.str("status") != "PAID" || paid.num("netAmount") != 9901 {
				t.Fatalf("paid: %s", paid.Raw)
			}
			wantSplits(t, paid, "platform", []splitWant{{a, 3000, "", "PAID"}, {b, 1237, "12.50", "PAID"}})
			wantBalance := func(acct string, want int64) {
				t.Helper()
				if w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, acct, nil); w.num("available") != want {
					t.Errorf("wallet of %q: %s, want available %d", acct, w.Raw, want)
				}
			}
			wantBalance(a, 3000)
			wantBalance(b, 1237)
			wantBalance("", 9901-3000-1237)

			// feePayer proportional: a fixed 5000 of 10000 bears half the
			// fees, 5000 × 9901 / 10000 = 4950.5 → 4950.
			p := create(map[string]any{"amount": 10000, "feePayer": "proportional", "splits": []any{
				map[string]any{"account": a, "amount": 5000}}}, "")
			e.want(p, 201, "")
			e.payPix(p.str("id"))
			wantSplits(t, read(p.str("id")), "proportional", []splitWant{{a, 4950, "", "PAID"}})
			wantBalance(a, 3000+4950)

			// Cancelled unpaid: its splits are cancelled and credit nobody.
			x := create(map[string]any{"amount": 2000, "splits": []any{map[string]any{"account": b, "percent": "50"}}}, "")
			e.want(x, 201, "")
			e.want(e.as("POST", "/payments/"+x.str("id")+"/cancel", e.acct.TestKey, "", map[string]any{}), 200, "")
			wantSplits(t, read(x.str("id")), "platform", []splitWant{{b, -1, "50.00", "CANCELLED"}})
			wantBalance(b, 1237)

			// A payment without splits shows none.
			if plain := read(e.create(1000, "BRL", "PIX")); contains(plain.Raw, `"splits"`) || contains(plain.Raw, `"feePayer"`) {
				t.Errorf("a payment without splits: %s", plain.Raw)
			}
			testSplitPaymentRefusals(t, e, create, a, b)
			e.verifyLedger()
		})
	}
}

// testSplitPaymentRefusals: the refusals of POST /v1/charges' splits, named
// in the payments format (feePayer; the snake_case fee_payer is unknown).
func testSplitPaymentRefusals(t *testing.T, e *payEnv, create func(map[string]any, string) apiResp, a, b string) {
	t.Helper()
	other := e.srv.NewAccount(t, "Outra Plataforma")
	foreign := (&payEnv{t: t, srv: e.srv, clock: e.clock, acct: other}).newSeller("Alheio")
	disabled := e.newSeller("Desligado")
	e.want(e.as("POST", "/subaccounts/"+disabled+"/disable", e.acct.TestKey, "", nil), 200, "")
	one := func(acct string, amount int) []any { return []any{map[string]any{"account": acct, "amount": amount}} }
	for _, tt := range []struct {
		name        string
		body        map[string]any
		acct        string
		status      int
		code, param string
	}{
		{"another platform's seller", map[string]any{"amount": 1000, "splits": one(foreign, 10)}, "", 422, "split_account_invalid", "splits[0].account"},
		{"a disabled seller", map[string]any{"amount": 1000, "splits": append(one(a, 10), one(disabled, 10)...)}, "", 422, "split_account_invalid", "splits[1].account"},
		{"the platform itself", map[string]any{"amount": 1000, "splits": one(e.acct.AccountID, 10)}, "", 422, "split_account_invalid", "splits[0].account"},
		{"a seller splitting", map[string]any{"amount": 1000, "splits": one(b, 10)}, a, 422, "split_account_invalid", "splits[0].account"},
		{"twice", map[string]any{"amount": 1000, "splits": append(one(a, 10), one(a, 10)...)}, "", 400, "parameter_invalid", "splits[1].account"},
		{"above the net", map[string]any{"amount": 1000, "splits": one(a, 995)}, "", 400, "parameter_invalid", "splits"},
		{"above the net of the dearest method", map[string]any{"amount": 10000, "paymentMethods": []string{"PIX", "CREDIT_CARD"},
			"splits": one(a, 9901)}, "", 400, "parameter_invalid", "splits"},
		{"percents above 100", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "percent": "60"},
			map[string]any{"account": b, "percent": "40.01"}}}, "", 400, "parameter_invalid", "splits"},
		{"both amount and percent", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "amount": 10, "percent": "1"}}}, "", 400, "parameter_invalid", "splits[0].amount"},
		{"neither", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a}}}, "", 400, "parameter_invalid", "splits[0].amount"},
		{"bad percent", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "percent": "12.505"}}}, "", 400, "parameter_invalid", "splits[0].percent"},
		{"numeric percent", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "percent": 12}}}, "", 400, "parameter_invalid", "splits.percent"},
		{"negative amount", map[string]any{"amount": 1000, "splits": one(a, -1)}, "", 400, "parameter_invalid", "splits[0].amount"},
		{"bad account", map[string]any{"amount": 1000, "splits": one("ch_x", 1)}, "", 400, "parameter_invalid", "splits[0].account"},
		{"bad fee payer", map[string]any{"amount": 1000, "feePayer": "seller", "splits": one(a, 1)}, "", 400, "parameter_invalid", "feePayer"},
		{"fee payer in the charges' spelling", map[string]any{"amount": 1000, "fee_payer": "platform", "splits": one(a, 1)}, "", 400, "parameter_unknown", "fee_payer"},
		{"21 splits", map[string]any{"amount": 100000, "splits": manySplits(a, 21)}, "", 400, "parameter_invalid", "splits"},
	} {
		r := create(tt.body, tt.acct)
		if r.Status != tt.status || r.code() != tt.code || r.param() != tt.param {
			t.Errorf("%s: %d %s %q, want %d %s %q: %s", tt.name, r.Status, r.code(), r.param(), tt.status, tt.code, tt.param, r.Raw)
		}
	}
	// The message names the payments format's field too.
	r := create(map[string]any{"amount": 1000, "feePayer": "seller", "splits": one(a, 1)}, "")
	if !contains(r.Raw, "feePayer must be platform or proportional") {
		t.Errorf("bad feePayer message: %s", r.Raw)
	}
}

// splitWant is one split a read must show; amount -1 is null.
type splitWant struct {
	account string
	amount  float64
	percent string
	status  string
}

func wantSplits(t *testing.T, r apiResp, payer string, want []splitWant) {
	t.Helper()
	got, _ := r.Body["splits"].([]any)
	if r.str("feePayer") != payer || len(got) != len(want) {
		t.Fatalf("splits, want feePayer %s and %d splits: %s", payer, len(want), r.Raw)
	}
	for i, w := range want {
		s, _ := got[i].(map[string]any)
		amount, _ := s["amount"].(float64)
		if s["amount"] == nil {
			amount = -1
		}
		percent, _ := s["percent"].(string)
		if s["account"] != w.account || amount != w.amount || percent != w.percent || s["status"] != w.status {
			t.Errorf("split %d: %v, want %+v", i, s, w)
		}
	}
}
