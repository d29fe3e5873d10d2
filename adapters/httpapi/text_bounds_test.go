package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testkit"
)

// Over HTTP, on SQLite and Postgres: an e-mail Pix key holding a
// bidirectional override ("a@exa\u202emple.com" shows reversed) or any
// non-ASCII character is refused for a payout and for a cashout refund;
// free texts with control or bidirectional formatting characters — a
// charge's description and customer name, metadata, a payout's
// description, a refund's reason, the pay helper's payer_name — are 400
// parameter_invalid naming the field, and nothing is created. Line breaks
// in a description are kept as sent.
func TestTextInputsRefuseControls(t *testing.T) {
	t.Parallel()
	const rlo = "\u202e"
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			e.fundPayouts(100000)
			payout := func(key, desc string) payResp {
				body := map[string]any{"amount": 100, "destination": map[string]any{"pix_key": key}}
				if desc != "" {
					body["description"] = desc
				}
				return e.postPayout(e.acct.TestKey, e.key(), body)
			}
			for _, key := range []string{"a@exa" + rlo + "mple.com", "joão@example.com", "a@example.com\u2066"} {
				wantParam(t, payout(key, ""), 400, "parameter_invalid", "destination.pix_key")
			}
			wantParam(t, payout("a@example.com", "saque"+rlo), 400, "parameter_invalid", "description")
			if list := e.call("GET", "/payouts", e.acct.TestKey, nil); len(list.Body["data"].([]any)) != 0 {
				t.Errorf("refused payouts left %s", list.Raw)
			}
			e.want(payout("maria.silva@example.com", "saque\nsemanal"), 201, "")

			id := e.create(10000, "BRL", "PIX")
			e.payPix(id)
			refund := func(extra map[string]any) payResp {
				body := map[string]any{"idempotencyKey": e.key(), "amount": 100, "strategy": "cashout"}
				for k, v := range extra {
					body[k] = v
				}
				return e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, body)
			}
			wantParam(t, refund(map[string]any{"destinationKey": "a@exa" + rlo + "mple.com"}), 400, "parameter_invalid", "destinationKey")
			wantParam(t, refund(map[string]any{"reason": "esgotado" + rlo}), 400, "parameter_invalid", "reason")
			wantParam(t, refund(map[string]any{"reason": "esgotado\x1b[2J"}), 400, "parameter_invalid", "reason")
			if list := e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil); len(list.Body["data"].([]any)) != 0 {
				t.Errorf("refused refunds left %s", list.Raw)
			}

			charge := func(extra map[string]any) payResp {
				body := map[string]any{"amount": 1000, "payment_method": "pix"}
				for k, v := range extra {
					body[k] = v
				}
				return e.callKeyed(http.MethodPost, "/charges", body)
			}
			wantParam(t, charge(map[string]any{"description": "Pedido " + rlo + "42"}), 400, "parameter_invalid", "description")
			wantParam(t, charge(map[string]any{"customer": map[string]any{"name": "Maria\u200f"}}), 400, "parameter_invalid", "customer.name")
			wantParam(t, charge(map[string]any{"metadata": map[string]any{"nota": "x" + rlo}}), 400, "parameter_invalid", "metadata")
			ok := charge(map[string]any{"description": "Pedido 42\nmesa 7"})
			e.want(ok, 201, "")
			if m, _ := ok.Body["metadata"].(map[string]any); m["description"] != "Pedido 42\nmesa 7" {
				t.Errorf("description echoed as %q", m["description"])
			}

			unpaid := e.create(1000, "BRL", "PIX")
			wantParam(t, e.call("POST", "/test_helpers/charges/"+unpaid+"/pay", e.acct.TestKey,
				map[string]any{"payer_name": "Maria" + rlo}), 400, "parameter_invalid", "payer_name")
			if g := e.call("GET", "/payments/"+unpaid, e.acct.TestKey, nil); g.str("status") != "WAITING_PAYMENT" {
				t.Errorf("a refused pay changed the payment: %.200s", g.Raw)
			}
			for _, r := range []string{rlo, "\u2066"} {
				if strings.Contains(string(charge(map[string]any{"description": r}).Raw), r) {
					t.Errorf("a refusal repeats the text")
				}
			}
		})
	}
}

// callKeyed is call with the test key and a fresh Idempotency-Key header.
func (e *payEnv) callKeyed(method, path string, body any) payResp {
	e.t.Helper()
	r := testkit.Do(e.t, method, e.srv.BaseURL+path, body, testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": e.key()})
	out := payResp{Status: r.Status, Header: r.Header, Raw: r.Body}
	if err := json.Unmarshal(r.Body, &out.Body); err != nil {
		e.t.Fatalf("%s %s: %s: %v", method, path, r.Body, err)
	}
	return out
}
