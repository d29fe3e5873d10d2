package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TestSandboxCashoutRefunds: in test mode a cashout refund is a
// Pix out through the sandbox's PixSender, the capability payouts use,
// under the send id derived from the refund; it completes as before. A
// failing test key fails it and the money comes back; a devolution is
// still a return of the original Pix and sends nothing.
func TestSandboxCashoutRefunds(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			id := e.create(10000, "BRL", "PIX")
			e.payPix(id)
			sends := func(refundID string) []ports.PixSendRequest {
				var out []ports.PixSendRequest
				for _, s := range e.srv.Sandbox.Sends() {
					if s.SendID == domain.RefundSendID(e.acct.AccountID, strings.TrimPrefix(refundID, domain.PrefixRefund)) {
						out = append(out, s)
					}
				}
				return out
			}
			refund := func(body map[string]any) (string, string) {
				t.Helper()
				body["idempotencyKey"] = e.key()
				r := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, body)
				e.want(r, 201, "")
				e.advanceRefunds()
				list := e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil)
				for _, x := range list.Body["data"].([]any) {
					if m := x.(map[string]any); m["id"] == r.str("id") {
						return r.str("id"), m["status"].(string)
					}
				}
				t.Fatalf("refund %s not listed: %s", r.str("id"), list.Raw)
				return "", ""
			}
			avail, _ := e.balance("BRL")

			rid, st := refund(map[string]any{"amount": 1000, "strategy": "cashout", "destinationKey": "maria@example.com", "passFeeToTenant": true})
			got := sends(rid)
			if st != "REFUNDED" || len(got) != 1 || got[0].Amount != 1000 || got[0].Mode != domain.ModeTest ||
				got[0].Key != (domain.PixKey{Type: domain.PixKeyEmail, Value: "maria@example.com"}) {
				t.Fatalf("cashout refund %s: %s, Pix sent %+v", rid, st, got)
			}
			// The default strategy of a Pix refund is cashout: to the
			// payer's key, as the sandbox bank knows it.
			rid, st = refund(map[string]any{"amount": 500})
			if got := sends(rid); st != "REFUNDED" || len(got) != 1 || got[0].Key.Type != domain.PixKeyEVP {
				t.Fatalf("default refund %s: %s, Pix sent %+v", rid, st, got)
			}
			returns := len(e.srv.Sandbox.Returns())
			rid, st = refund(map[string]any{"amount": 700, "strategy": "devolution"})
			if st != "REFUNDED" || len(sends(rid)) != 0 || len(e.srv.Sandbox.Returns()) != returns+1 {
				t.Fatalf("devolution %s: %s, %d Pix sent, returns %d → %d", rid, st, len(sends(rid)), returns, len(e.srv.Sandbox.Returns()))
			}
			rid, st = refund(map[string]any{"amount": 300, "strategy": "cashout", "destinationKey": "invalid_key" + sandbox.FailingKeyDomain,
				"passFeeToTenant": true})
			if st != "FAILED" || len(sends(rid)) != 1 {
				t.Fatalf("refund to a failing key %s: %s, %d Pix sent", rid, st, len(sends(rid)))
			}
			if a, _ := e.balance("BRL"); a != avail-1000-500-700 {
				t.Errorf("available %d, want %d (the failed refund's money back)", a, avail-1000-500-700)
			}
			e.verifyLedger()
		})
	}
}
