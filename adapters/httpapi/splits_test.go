package httpapi_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TestSplitCharges: a platform's charge with splits (fixed and percent,
// both fee payers) credits each seller's wallet its share and the
// platform the rest in the payment's transaction; the charge and
// charge.paid show the splits; each seller gets transfer.created; bad
// splits are refused naming the entry; the ledger verifies. Both
// databases.
func TestSplitCharges(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			a, b := e.newSeller("Vendedor A"), e.newSeller("Vendedor B")
			other := e.srv.NewAccount(t, "Outra Plataforma")
			foreign := (&payEnv{t: t, srv: e.srv, clock: e.clock, acct: other}).newSeller("Alheio")
			disabled := e.newSeller("Desligado")
			e.want(e.as("POST", "/subaccounts/"+disabled+"/disable", e.acct.TestKey, "", nil), 200, "")
			create := func(body map[string]any, acct string) apiResp {
				body["payment_method"] = "pix"
				return e.as("POST", "/charges", e.acct.TestKey, acct, body, "Idempotency-Key", e.key())
			}

			// 10000 by Pix: 99 in fees (0.99 %), net 9901. A fixed 3000 and
			// 12.50 % of 9901 = 1237.625 → 1237; the platform 5664.
			c := create(map[string]any{"amount": 10000, "splits": []any{
				map[string]any{"account": a, "amount": 3000},
				map[string]any{"account": b, "percent": "12.50"},
			}}, "")
			e.want(c, 201, "")
			splits, _ := c.Body["splits"].([]any)
			if len(splits) != 2 || c.str("fee_payer") != "platform" {
				t.Fatalf("created: %s", c.Raw)
			}
			if s0 := splits[0].(map[string]any); s0["status"] != "pending" || s0["amount"] != 3000.0 {
				t.Errorf("pending fixed split: %v", s0)
			}
			if s1 := splits[1].(map[string]any); s1["amount"] != nil || s1["percent"] != "12.50" {
				t.Errorf("pending percent split: %v", s1)
			}
			id := c.str("id")
			e.want(e.as("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, "", map[string]any{}), 200, "")
			got := e.as("GET", "/charges/"+id, e.acct.TestKey, "", nil)
			paid, _ := got.Body["splits"].([]any)
			for i, want := range []float64{3000, 1237} {
				if s := paid[i].(map[string]any); s["status"] != "paid" || s["amount"] != want {
					t.Errorf("paid split %d: %v, want %v", i, s, want)
				}
			}
			wantBalance := func(acct string, want int64) {
				t.Helper()
				if w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, acct, nil); w.num("available") != want {
					t.Errorf("wallet of %s: %s, want available %d", acct, w.Raw, want)
				}
			}
			wantBalance(a, 3000)
			wantBalance(b, 1237)
			wantBalance("", 9901-3000-1237)

			// charge.paid carries the splits; each seller has transfer.created.
			ctx := context.Background()
			raw, _ := domain.ParseChargeID(id)
			evs, err := e.srv.App.DB.ListChargeEvents(ctx, ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeTest}, raw)
			if err != nil {
				t.Fatal(err)
			}
			var sawPaid bool
			for _, ev := range evs {
				if ev.Type == domain.EventChargePaid {
					sawPaid = true
					if obj, _ := ev.CanonicalObject(); !contains(obj, `"splits":[{"account":"`+a+`","amount":3000,"status":"paid","amount_reversed":0}`) {
						t.Errorf("charge.paid: %s", obj)
					}
				}
			}
			if !sawPaid {
				t.Error("no charge.paid")
			}
			for seller, amount := range map[string]string{a: `"amount":3000`, b: `"amount":1237`} {
				l := e.as("GET", "/events?type=transfer.created", e.acct.TestKey, seller, nil)
				data, _ := l.Body["data"].([]any)
				if l.Status != 200 || len(data) != 1 || !contains(l.Raw, amount) || !contains(l.Raw, `"source_charge":"`+id+`"`) {
					t.Errorf("transfer.created of %s: %s", seller, l.Raw)
				}
			}

			// Proportional: a fixed 5000 of 10000 bears half the fees: 5000 × 9901 / 10000 = 4950.5 → 4950.
			p := create(map[string]any{"amount": 10000, "fee_payer": "proportional", "splits": []any{
				map[string]any{"account": a, "amount": 5000}}}, "")
			e.want(p, 201, "")
			e.want(e.as("POST", "/test_helpers/charges/"+p.str("id")+"/pay", e.acct.TestKey, "", map[string]any{}), 200, "")
			wantBalance(a, 3000+4950)

			for _, tt := range []struct {
				name        string
				body        map[string]any
				acct        string
				status      int
				code, param string
			}{
				{"another platform's seller", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": foreign, "amount": 10}}}, "", 422, "split_account_invalid", "splits[0].account"},
				{"a disabled seller", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "amount": 10}, map[string]any{"account": disabled, "amount": 10}}}, "", 422, "split_account_invalid", "splits[1].account"},
				{"the platform itself", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": e.acct.AccountID, "amount": 10}}}, "", 422, "split_account_invalid", "splits[0].account"},
				{"a seller splitting", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": b, "amount": 10}}}, a, 422, "split_account_invalid", "splits[0].account"},
				{"twice", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "amount": 10}, map[string]any{"account": a, "amount": 10}}}, "", 400, "parameter_invalid", "splits[1].account"},
				{"above the net", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "amount": 995}}}, "", 400, "parameter_invalid", "splits"},
				{"percents above 100", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "percent": "60"}, map[string]any{"account": b, "percent": "40.01"}}}, "", 400, "parameter_invalid", "splits"},
				{"both amount and percent", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "amount": 10, "percent": "1"}}}, "", 400, "parameter_invalid", "splits[0].amount"},
				{"neither", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a}}}, "", 400, "parameter_invalid", "splits[0].amount"},
				{"bad percent", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "percent": "12.505"}}}, "", 400, "parameter_invalid", "splits[0].percent"},
				{"numeric percent", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "percent": 12}}}, "", 400, "parameter_invalid", "splits.percent"},
				{"negative amount", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": a, "amount": -1}}}, "", 400, "parameter_invalid", "splits[0].amount"},
				{"bad account", map[string]any{"amount": 1000, "splits": []any{map[string]any{"account": "ch_x", "amount": 1}}}, "", 400, "parameter_invalid", "splits[0].account"},
				{"bad fee payer", map[string]any{"amount": 1000, "fee_payer": "seller", "splits": []any{map[string]any{"account": a, "amount": 1}}}, "", 400, "parameter_invalid", "fee_payer"},
				{"21 splits", map[string]any{"amount": 100000, "splits": manySplits(a, 21)}, "", 400, "parameter_invalid", "splits"},
			} {
				r := create(tt.body, tt.acct)
				if r.Status != tt.status || (tt.code != "" && r.code() != tt.code) || r.param() != tt.param {
					t.Errorf("%s: %d %s %q, want %d %s %q: %s", tt.name, r.Status, r.code(), r.param(), tt.status, tt.code, tt.param, r.Raw)
				}
			}
			e.verifyLedger()
		})
	}
}

func manySplits(acct string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"account": acct, "amount": 1}
	}
	return out
}

func contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }
