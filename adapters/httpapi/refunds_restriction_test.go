package httpapi_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TestCashoutPayerOnly: with the account's restriction a cashout goes only
// to the payer's own document — a CPF/CNPJ key equal to the document the
// payer's bank disclosed, or no key (that document) — and anything else is
// 422 cashout_destination_not_allowed naming destinationKey, without the
// key in the answer, and writes nothing. A devolution is never restricted;
// a refund that did not ask for a cashout of a payment whose payer is
// unknown goes back as a devolution. The restriction is on by default in
// live mode and off in test mode, and an operator can turn it either way.
func TestCashoutPayerOnly(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			ctx := context.Background()
			restrict := func(tg ports.Toggle) {
				t.Helper()
				if err := e.srv.App.Dashboard.GuardSettings.Set(ctx, e.acct.AccountID, ports.AccountSettings{CashoutPayerOnly: tg}); err != nil {
					t.Fatal(err)
				}
			}
			pay := func(doc string) string {
				t.Helper()
				id := e.create(100000, "BRL", "PIX")
				body := map[string]any{}
				if doc != "" {
					body["payer_document"] = doc
				}
				e.want(e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, body), 200, "")
				return id
			}
			refund := func(key, id string, body map[string]any) payResp {
				t.Helper()
				body["idempotencyKey"] = e.key()
				if _, ok := body["amount"]; !ok {
					body["amount"] = 1000
				}
				return e.call("POST", "/payments/"+id+"/refund", key, body)
			}
			refused := func(r payResp) {
				t.Helper()
				e.want(r, 422, "cashout_destination_not_allowed")
				if r.param() != "destinationKey" {
					t.Errorf("the refusal names %q: %s", r.param(), r.Raw)
				}
				for _, clear := range []string{"conta.laranja", "987654321", "390.533", "39053344705", "52998224725", "982.247"} {
					if strings.Contains(string(r.Raw), clear) {
						t.Errorf("the refusal repeats %q: %s", clear, r.Raw)
					}
				}
			}
			strategyOf := func(r payResp) string {
				t.Helper()
				e.want(r, 201, "")
				return r.str("strategy")
			}
			const mule = "conta.laranja@example.com"
			paid, unknown := pay("529.982.247-25"), pay("")
			tk := e.acct.TestKey

			// Test mode: off by default.
			if s := strategyOf(refund(tk, paid, map[string]any{"strategy": "cashout", "destinationKey": mule, "passFeeToTenant": true})); s != "cashout" {
				t.Errorf("test mode, default: %s", s)
			}
			restrict(ports.ToggleOn)
			list := func(id string) int {
				l := e.call("GET", "/payments/"+id+"/refunds", tk, nil)
				e.want(l, 200, "")
				return len(l.Body["data"].([]any))
			}
			before := list(paid)
			avail, _ := e.balance("BRL")
			refused(refund(tk, paid, map[string]any{"strategy": "cashout", "destinationKey": mule, "passFeeToTenant": true}))
			refused(refund(tk, paid, map[string]any{"destinationKey": "+55 11 98765-4321", "passFeeToTenant": true}))
			refused(refund(tk, paid, map[string]any{"strategy": "cashout", "destinationKey": "390.533.447-05", "passFeeToTenant": true}))
			if n, a := list(paid), func() int64 { a, _ := e.balance("BRL"); return a }(); n != before || a != avail {
				t.Errorf("refused cashouts wrote something: %d → %d refunds, available %d → %d", before, n, avail, a)
			}
			if r := refund(tk, paid, map[string]any{"strategy": "cashout", "destinationKey": "52998224725"}); strategyOf(r) != "cashout" ||
				r.str("destinationKey") != "***.982.247-**" {
				t.Errorf("to the payer's CPF: %s", r.Raw)
			}
			if s := strategyOf(refund(tk, paid, map[string]any{})); s != "cashout" {
				t.Errorf("to the payer's document by default: %s", s)
			}
			if s := strategyOf(refund(tk, paid, map[string]any{"strategy": "devolution", "destinationKey": mule})); s != "devolution" {
				t.Errorf("devolution: %s", s)
			}
			// A payer whose bank did not disclose the document.
			refused(refund(tk, unknown, map[string]any{"strategy": "cashout"}))
			refused(refund(tk, unknown, map[string]any{"strategy": "cashout", "destinationKey": "52998224725", "passFeeToTenant": true}))
			if s := strategyOf(refund(tk, unknown, map[string]any{})); s != "devolution" {
				t.Errorf("a refund without strategy of an undisclosed payer: %s, want devolution", s)
			}
			restrict(ports.ToggleDefault)
			if s := strategyOf(refund(tk, unknown, map[string]any{"strategy": "cashout", "destinationKey": mule, "passFeeToTenant": true})); s != "cashout" {
				t.Errorf("test mode back to the default: %s", s)
			}

			// Live mode: on by default.
			lk := e.acct.LiveKey
			r := e.call("POST", "/payments", lk, map[string]any{"amount": 50000, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()})
			e.want(r, 201, "")
			live := r.str("id")
			now := e.clock.Now()
			e2e, err := domain.NewEndToEndID("12345678", now, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.srv.App.Charges.ApplyPixPayment(ctx, ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeLive},
				strings.TrimPrefix(live, domain.PrefixTransaction), domain.PixPayment{EndToEndID: e2e, Amount: 50000,
					PayerTaxID: "52998224725", PayerName: "Maria", PaidAt: now}); err != nil {
				t.Fatal(err)
			}
			refused(refund(lk, live, map[string]any{"strategy": "cashout", "destinationKey": mule, "passFeeToTenant": true}))
			if s := strategyOf(refund(lk, live, map[string]any{"destinationKey": "529.982.247-25"})); s != "cashout" {
				t.Errorf("live, to the payer's CPF: %s", s)
			}
			restrict(ports.ToggleOff)
			if s := strategyOf(refund(lk, live, map[string]any{"strategy": "cashout", "destinationKey": mule, "passFeeToTenant": true})); s != "cashout" {
				t.Errorf("live, restriction off: %s", s)
			}
			e.verifyLedger()
		})
	}
}
