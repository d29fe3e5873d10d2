package httpapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
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

// The sandbox's MED return drives the path of a return the acquirer
// reports: the charge reads disputed and lists it, charge.disputed goes
// out, the wallet is debited available first and its debt grows by what
// it cannot cover, which the next payment pays first. Live keys get 404;
// bad input and a charge never credited are refused in the envelope.
func TestSandboxMEDReturn(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			ch := func(tx string) string { return "ch_" + strings.TrimPrefix(tx, "tx_") }
			id := e.create(10000, "BRL", "PIX")
			path := "/test_helpers/charges/" + ch(id) + "/med_return"
			e.want(e.call("POST", path, e.acct.TestKey, map[string]any{"reason": "fraud"}), 409, "charge_not_disputable")
			e.payPix(id)
			e.want(e.call("POST", path, e.acct.LiveKey, map[string]any{"reason": "fraud"}), 404, "resource_not_found")
			e.want(e.call("POST", path, e.acct.TestKey, map[string]any{}), 400, "parameter_missing")
			e.want(e.call("POST", path, e.acct.TestKey, map[string]any{"reason": "weather"}), 400, "parameter_invalid")
			e.want(e.call("POST", path, e.acct.TestKey, map[string]any{"reason": "fraud", "amount": 0}), 400, "parameter_invalid")
			e.want(e.call("POST", path, e.acct.TestKey, map[string]any{"reason": "fraud", "amount": 10001}), 400, "dispute_exceeds_amount")

			r := e.call("POST", path, e.acct.TestKey, map[string]any{"reason": "fraud", "amount": 3000})
			e.want(r, 200, "")
			disputes, _ := r.Body["disputes"].([]any)
			if r.str("status") != "disputed" || len(disputes) != 1 {
				t.Fatalf("after a MED return: %s", r.Raw)
			}
			first := disputes[0].(map[string]any)
			if first["amount"].(float64) != 3000 || first["reason"] != "fraud" || first["end_to_end_id"] == "" || first["return_id"] == "" {
				t.Errorf("dispute %v", first)
			}
			if avail, _ := e.balance("BRL"); avail != 9901-3000 {
				t.Errorf("available %d after a 3000 MED return of a 9901 credit, want 6901", avail)
			}
			// The rest, by default: more than the wallet holds.
			r = e.call("POST", path, e.acct.TestKey, map[string]any{"reason": "operational"})
			e.want(r, 200, "")
			if ds, _ := r.Body["disputes"].([]any); len(ds) != 2 || ds[1].(map[string]any)["amount"].(float64) != 7000 {
				t.Fatalf("second MED return: %s", r.Raw)
			}
			b := e.call("GET", "/wallets/balance", e.acct.TestKey, nil)
			if b.num("available") != 0 || b.num("owed") != 99 {
				t.Fatalf("after 10000 taken back from a 9901 credit: %s, want owed 99", b.Raw)
			}
			e.want(e.call("POST", path, e.acct.TestKey, map[string]any{"reason": "fraud"}), 400, "dispute_exceeds_amount")
			evs := e.call("GET", "/events?type=charge.disputed", e.acct.TestKey, nil)
			if data, _ := evs.Body["data"].([]any); len(data) != 1 {
				t.Errorf("charge.disputed events: %s", evs.Raw)
			}
			e.verifyLedger()
			next := e.create(10000, "BRL", "PIX")
			e.payPix(next)
			if b := e.call("GET", "/wallets/balance", e.acct.TestKey, nil); b.num("available") != 9802 || b.num("owed") != 0 {
				t.Errorf("the next payment did not pay the debt first: %s", b.Raw)
			}
			e.verifyLedger()
		})
	}
}

// Payers' money held under the payer lock is in the ledger (payer_funds)
// from its arrival: a held charge later settled credits the merchant from
// it, and one closed by cancel or by any transition returns it to the
// payer — never kept.
func TestHeldPayerMoneyIsPostedAndReturned(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			held := func() string {
				raw := testkit.Do(t, "POST", e.srv.BaseURL+"/charges", map[string]any{"amount": 5000, "payment_method": "pix",
					"customer": map[string]any{"name": "Maria Silva"}, "expected_payer_tax_id": "52998224725"},
					testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": e.key()})
				r := payResp{Status: raw.Status, Raw: raw.Body}
				if err := json.Unmarshal(raw.Body, &r.Body); err != nil {
					t.Fatal(err)
				}
				e.want(r, 201, "")
				id := r.str("id")
				p := e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, map[string]any{})
				e.want(p, 200, "")
				if p.str("status") != "processing" {
					t.Fatalf("an undisclosed payer under a lock: %s", p.Raw)
				}
				e.verifyLedger()
				return "tx_" + strings.TrimPrefix(id, "ch_")
			}
			for _, close := range []func(id string) payResp{
				func(id string) payResp {
					return e.call("POST", "/test_helpers/payments/"+id+"/transition", e.acct.TestKey, map[string]any{"status": "CANCELLED"})
				},
				func(id string) payResp {
					return e.call("POST", "/test_helpers/payments/"+id+"/transition", e.acct.TestKey, map[string]any{"status": "REFUSED"})
				},
				func(id string) payResp { return e.call("POST", "/payments/"+id+"/cancel", e.acct.TestKey, nil) },
			} {
				id := held()
				e.want(close(id), 200, "")
				if _, err := e.srv.App.Charges.AdvanceReturns(context.Background()); err != nil {
					t.Fatal(err)
				}
				rets, err := e.srv.App.Charges.PixReturns(context.Background(), domain.PixReturnReturned, 100)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(rets, func(r domain.PixReturn) bool { return r.ChargeID == strings.TrimPrefix(id, "tx_") }) {
					t.Errorf("%s: the held payer's money was not returned", id)
				}
				e.verifyLedger()
			}
			if avail, pending := e.balance("BRL"); avail != 0 || pending != 0 {
				t.Errorf("the merchant holds %d + %d of payers' money", avail, pending)
			}
			id := held()
			e.want(e.call("POST", "/test_helpers/payments/"+id+"/transition", e.acct.TestKey, map[string]any{"status": "PAID", "paidWith": "PIX"}), 200, "")
			if avail, _ := e.balance("BRL"); avail != 4950 { // 5000 less 25 + 25 (50 and 49 bps, half up)
				t.Errorf("a held charge settled credited %d, want 4950", avail)
			}
			e.verifyLedger()
		})
	}
}

// Money the merchant owes from disputes never leaves by payout or refund,
// even when a credit that pays no debt (a cancelled payout, a failed
// refund) puts money back in available; and a MED return counts the
// refunds still in flight, so a payment is never taken back twice.
func TestDebtIsNeverWithdrawn(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			a, b := e.create(10000, "BRL", "PIX"), e.create(10000, "BRL", "PIX")
			e.payPix(a)
			e.payPix(b)
			po := e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 19802, "destination": map[string]any{"pix_key": "52998224725"}})
			e.want(po, 201, "")
			e.want(e.call("POST", "/test_helpers/charges/ch_"+strings.TrimPrefix(a, "tx_")+"/med_return", e.acct.TestKey,
				map[string]any{"reason": "fraud"}), 200, "")
			e.want(e.call("POST", "/payouts/"+po.str("id")+"/cancel", e.acct.TestKey, nil), 200, "")
			bal := e.call("GET", "/wallets/balance", e.acct.TestKey, nil)
			if bal.num("available") != 19802 || bal.num("owed") != 10000 {
				t.Fatalf("after the payout's cancel: %s", bal.Raw)
			}
			e.want(e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 9803, "destination": map[string]any{"pix_key": "52998224725"}}), 422, "insufficient_balance")
			e.want(e.call("POST", "/payments/"+b+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 9803}), 422, "insufficient_balance")
			e.want(e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 9000, "destination": map[string]any{"pix_key": "52998224725"}}), 201, "")

			// A MED return beside a refund in flight takes no more than the
			// payment has left.
			c := e.create(10000, "BRL", "PIX")
			e.payPix(c)
			e.want(e.call("POST", "/payments/"+c+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 6000}), 201, "")
			med := "/test_helpers/charges/ch_" + strings.TrimPrefix(c, "tx_") + "/med_return"
			e.want(e.call("POST", med, e.acct.TestKey, map[string]any{"reason": "fraud", "amount": 4001}), 400, "dispute_exceeds_amount")
			r := e.call("POST", med, e.acct.TestKey, map[string]any{"reason": "fraud"})
			e.want(r, 200, "")
			if ds, _ := r.Body["disputes"].([]any); len(ds) != 1 || ds[0].(map[string]any)["amount"].(float64) != 4000 {
				t.Errorf("MED return beside a refund of 6000 in flight: %s", r.Raw)
			}
			// A card payment is no Pix: no MED return.
			card := e.create(10000, "BRL", "CREDIT_CARD")
			e.want(e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.TestKey, map[string]any{"status": "APPROVED"}), 200, "")
			e.want(e.call("POST", "/test_helpers/charges/ch_"+strings.TrimPrefix(card, "tx_")+"/med_return", e.acct.TestKey,
				map[string]any{"reason": "fraud"}), 409, "charge_not_disputable")
			e.advanceRefunds()
			e.verifyLedger()
		})
	}
}
