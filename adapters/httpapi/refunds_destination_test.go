package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// TestRefundsShowWhereTheMoneyWent: every surface a refund appears on —
// the create answer, the refunds list, the payment.refunded events —
// says how it travelled and, for a cashout to a key, the key masked as a
// payout's destination is; the key in clear is in no answer, event or log
// line. A devolution and a cashout to the payer's document name no key,
// and a card refund has no strategy.
func TestRefundsShowWhereTheMoneyWent(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			logs := &testkit.Buffer{}
			clock := quitatest.NewClock()
			srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: d.dsn(t), Clock: clock, Log: logs})
			e := &payEnv{t: t, srv: srv, clock: clock, acct: srv.NewAccount(t, "Loja Destinos")}
			id := e.create(10000, "BRL", "PIX")
			e.want(e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey,
				map[string]any{"payer_document": "529.982.247-25", "payer_name": "Maria Conceição"}), 200, "")
			const mule = "conta.laranja@example.com"
			type shown struct{ strategy, key, keyType any }
			cases := []struct {
				body map[string]any
				want shown
			}{
				{map[string]any{"amount": 1000, "strategy": "cashout", "destinationKey": mule, "passFeeToTenant": true},
					shown{"cashout", "c***@example.com", "email"}},
				{map[string]any{"amount": 900, "strategy": "cashout", "destinationKey": "+55 (11) 98765-4321", "passFeeToTenant": true},
					shown{"cashout", "+5511*****4321", "phone"}},
				{map[string]any{"amount": 800, "strategy": "cashout", "destinationKey": "529.982.247-25"},
					shown{"cashout", "***.982.247-**", "cpf"}},
				{map[string]any{"amount": 700}, shown{"cashout", nil, nil}},
				{map[string]any{"amount": 600, "strategy": "devolution", "destinationKey": mule}, shown{"devolution", nil, nil}},
			}
			byID := map[string]shown{}
			for _, tc := range cases {
				tc.body["idempotencyKey"] = e.key()
				r := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, tc.body)
				e.want(r, 201, "")
				got := shown{r.Body["strategy"], r.Body["destinationKey"], r.Body["destinationKeyType"]}
				if got != tc.want {
					t.Errorf("refund %v answered %+v, want %+v: %s", tc.body, got, tc.want, r.Raw)
				}
				byID[r.str("id")] = tc.want
			}
			e.advanceRefunds()
			list := e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil)
			e.want(list, 200, "")
			for _, x := range list.Body["data"].([]any) {
				m := x.(map[string]any)
				want, ok := byID[m["id"].(string)]
				if got := (shown{m["strategy"], m["destinationKey"], m["destinationKeyType"]}); !ok || got != want {
					t.Errorf("listed %v: %+v, want %+v", m["id"], got, want)
				}
			}

			card := e.create(5000, "BRL", "CREDIT_CARD")
			e.want(e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.TestKey,
				map[string]any{"status": "APPROVED", "paidWith": "CREDIT_CARD"}), 200, "")
			cr := e.call("POST", "/payments/"+card+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 100})
			e.want(cr, 201, "")
			if cr.Body["strategy"] != nil || cr.Body["destinationKey"] != nil || cr.num("fee") != 0 {
				t.Errorf("card refund: %s", cr.Raw)
			}

			// Each refund's payment.refunded events carry the same.
			evs := listEvents(t, srv, e.acct.TestKey, "?type=payment.refunded&limit=100")
			seen := map[string]int{}
			for _, ev := range evs.Data {
				var env domain.LegacyEnvelope
				if err := json.Unmarshal(ev.Payload, &env); err != nil {
					t.Fatal(err)
				}
				want, ok := byID[env.Data.RefundID]
				if !ok {
					continue
				}
				seen[env.Data.RefundID]++
				key, typ := any(nil), any(nil)
				if env.Data.RefundDestinationKey != "" {
					key, typ = env.Data.RefundDestinationKey, env.Data.RefundDestinationKeyType
				}
				if got := (shown{env.Data.RefundStrategy, key, typ}); got != want {
					t.Errorf("event of %s: %+v, want %+v", env.Data.RefundID, got, want)
				}
			}
			for rid := range byID {
				if seen[rid] < 2 {
					t.Errorf("refund %s: %d payment.refunded events, want its creation and its steps", rid, seen[rid])
				}
			}
			for _, where := range []struct{ name, text string }{{"refunds list", string(list.Raw)},
				{"events", string(mustJSON(t, evs))}, {"logs", logs.String()}} {
				for _, clear := range []string{mule, "conta.laranja", "5511987654321", "98765-4321"} {
					if strings.Contains(where.text, clear) {
						t.Errorf("the %s hold the destination key %q in clear", where.name, clear)
					}
				}
			}
			e.verifyLedger()
		})
	}
}
