package httpapi_test

import (
	"testing"
)

// A refund accepted while its payment was paid settles when the acquirer
// confirms it, whatever the payment became meanwhile: the refund reads
// REFUNDED with its refund_settled entry (ledger verify is clean), a full
// refund closes a dispute as REFUNDED, and a charged-back payment keeps
// CHARGEBACK.
func TestRefundCompletesDuringDispute(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			e.payPix(e.create(50000, "BRL", "PIX")) // covers the refunds below
			for _, tc := range []struct {
				dispute     []string
				amount      int64
				wantPayment string
			}{
				{[]string{"CHARGEBACK"}, 10000, "CHARGEBACK"},
				{[]string{"DISPUTE"}, 10000, "REFUNDED"},
				{[]string{"DISPUTE"}, 4000, "DISPUTE"},
				{[]string{"DISPUTE", "CHARGEBACK"}, 10000, "CHARGEBACK"},
			} {
				id := e.create(10000, "BRL", "PIX")
				e.payPix(id)
				r := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": tc.amount})
				e.want(r, 201, "")
				for _, to := range tc.dispute {
					e.want(e.call("POST", "/test_helpers/payments/"+id+"/transition", e.acct.TestKey, map[string]any{"status": to}), 200, "")
				}
				e.advanceRefunds()
				got := e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil)
				e.want(got, 200, "")
				refunds, _ := got.Body["data"].([]any)
				if len(refunds) != 1 || refunds[0].(map[string]any)["status"] != "REFUNDED" {
					t.Fatalf("%v: refunds %s", tc.dispute, got.Raw)
				}
				if p := e.call("GET", "/payments/"+id, e.acct.TestKey, nil); p.str("status") != tc.wantPayment {
					t.Errorf("%v, refund of %d: payment %s, want %s", tc.dispute, tc.amount, p.str("status"), tc.wantPayment)
				}
				e.verifyLedger()
			}
		})
	}
}
