package httpapi_test

import (
	"context"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
)

// TestCashoutBearsThePixOutFee: a cashout to a key other than the payer's
// own document is a Pix out like a payout and costs what a payout of the
// same amount costs, on the account's own PIX_OUT schedule; without
// passFeeToTenant (the only way the spec lets the fee reach the wallet) it
// is refused and nothing is written. Back to the payer's document a
// cashout costs nothing unless asked. A cashout that fails gives the
// amount and the fee back.
func TestCashoutBearsThePixOutFee(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			sched := domain.FeeSchedule{Provider: domain.Fee{Fixed: 30}, Platform: domain.Fee{BPS: 100, Fixed: 20}}
			if err := e.srv.App.Payments.SetAccountFee(context.Background(), e.acct.AccountID, domain.FeeKeyPixOut, sched); err != nil {
				t.Fatal(err)
			}
			const wantFee = 30 + 100 + 20 // on 10000
			id := e.create(100000, "BRL", "PIX")
			e.want(e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey,
				map[string]any{"payer_document": "529.982.247-25"}), 200, "")
			refund := func(body map[string]any) payResp {
				t.Helper()
				body["idempotencyKey"] = e.key()
				return e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, body)
			}
			avail, _ := e.balance("BRL")

			r := refund(map[string]any{"amount": 10000, "strategy": "cashout", "destinationKey": "conta.laranja@example.com"})
			e.want(r, 422, "cashout_fee_required")
			if r.param() != "passFeeToTenant" {
				t.Errorf("the refusal names %q: %s", r.param(), r.Raw)
			}
			if a, _ := e.balance("BRL"); a != avail {
				t.Fatalf("a refused cashout moved money: available %d → %d", avail, a)
			}
			// Without strategy the default is a cashout too.
			e.want(refund(map[string]any{"amount": 10000, "destinationKey": "+5511987654321"}), 422, "cashout_fee_required")

			r = refund(map[string]any{"amount": 10000, "strategy": "cashout", "destinationKey": "conta.laranja@example.com",
				"passFeeToTenant": true})
			e.want(r, 201, "")
			if r.num("fee") != wantFee {
				t.Errorf("cashout fee %d, want %d: %s", r.num("fee"), wantFee, r.Raw)
			}
			po := e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 10000,
				"destination": map[string]any{"pix_key": "conta.laranja@example.com"}})
			e.want(po, 201, "")
			if po.num("fee") != r.num("fee") {
				t.Errorf("the same Pix as a payout costs %d, as a cashout %d", po.num("fee"), r.num("fee"))
			}
			if a, _ := e.balance("BRL"); a != avail-2*(10000+wantFee) {
				t.Errorf("available %d, want %d (a cashout and a payout, each with its fee)", a, avail-2*(10000+wantFee))
			}

			// Back to the payer: free unless the merchant passes the fee on.
			for _, body := range []map[string]any{{"amount": 1000}, {"amount": 1000, "destinationKey": "52998224725"},
				{"amount": 1000, "strategy": "devolution", "destinationKey": "conta.laranja@example.com"}} {
				if r := refund(body); r.Status != 201 || r.num("fee") != 0 {
					t.Errorf("refund %v to the payer: %d %s", body, r.Status, r.Raw)
				}
			}
			if r := refund(map[string]any{"amount": 1000, "passFeeToTenant": true}); r.Status != 201 || r.num("fee") != 30+10+20 {
				t.Errorf("cashout to the payer with passFeeToTenant: %d %s", r.Status, r.Raw)
			}

			// A cashout that fails gives back the amount and the fee.
			before, _ := e.balance("BRL")
			r = refund(map[string]any{"amount": 5000, "strategy": "cashout", "destinationKey": "invalid_key" + sandbox.FailingKeyDomain,
				"passFeeToTenant": true})
			e.want(r, 201, "")
			if r.num("fee") != 30+50+20 {
				t.Errorf("fee of the failing cashout %d: %s", r.num("fee"), r.Raw)
			}
			if a, _ := e.balance("BRL"); a != before-5000-100 {
				t.Errorf("available %d after the debit, want %d", a, before-5000-100)
			}
			e.advanceRefunds()
			if a, _ := e.balance("BRL"); a != before {
				t.Errorf("available %d after the cashout failed, want %d back", a, before)
			}
			e.verifyLedger()
		})
	}
}
