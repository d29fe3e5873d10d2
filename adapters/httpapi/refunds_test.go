package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

func testPaymentRefunds(t *testing.T, e *payEnv) {
	availBefore, _ := e.balance("BRL")
	id := e.create(10000, "BRL", "PIX")
	e.want(e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key()}), 409, "charge_not_refundable")
	e.payPix(id)
	g := e.call("GET", "/payments/"+id, e.acct.TestKey, nil)
	if g.str("status") != "PAID" || g.num("providerFee") != 50 || g.num("platformFee") != 49 || g.num("netAmount") != 9901 ||
		g.str("paidWith") != "PIX" || g.Body["paidAt"] == nil {
		t.Fatalf("paid read: %s", g.Raw)
	}
	avail, _ := e.balance("BRL")
	if avail-availBefore != 9901 {
		t.Fatalf("available grew by %d, want 9901", avail-availBefore)
	}
	// A merchant who holds only this payment's net cannot cover its full
	// refund.
	poor := e.srv.NewAccount(t, "Loja Nova")
	pr := e.call("POST", "/payments", poor.TestKey, map[string]any{"amount": 10000, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()})
	e.want(pr, 201, "")
	e.want(e.call("POST", "/test_helpers/charges/"+pr.str("id")+"/pay", poor.TestKey, map[string]any{}), 200, "")
	e.want(e.call("POST", "/payments/"+pr.str("id")+"/refund", poor.TestKey, map[string]any{"idempotencyKey": e.key()}), 422, "insufficient_balance")
	e.want(e.call("POST", "/payments/"+pr.str("id")+"/refund", poor.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 9901}), 201, "")

	k := e.key()
	body := map[string]any{"idempotencyKey": k, "amount": 3000, "reason": "damaged", "strategy": "devolution"}
	r := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, body)
	e.want(r, 201, "")
	if !strings.HasPrefix(r.str("id"), "re_") || r.str("transactionId") != id || r.str("status") != "PENDING" || r.num("amount") != 3000 ||
		r.str("reason") != "damaged" || r.str("currency") != "BRL" || r.Body["createdAt"] == nil {
		t.Fatalf("refund: %s", r.Raw)
	}
	again := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, body)
	if again.Status != 201 || !bytes.Equal(again.Raw, r.Raw) {
		t.Errorf("refund replay: %d %s", again.Status, again.Raw)
	}
	body["amount"] = 3001
	e.want(e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, body), 409, "idempotency_key_reused")
	for _, b := range []map[string]any{
		{"amount": 100},
		{"idempotencyKey": "short", "amount": 100},
		{"idempotencyKey": e.key(), "amount": -5},
		{"idempotencyKey": e.key(), "amount": 7001},
		{"idempotencyKey": e.key(), "strategy": "wire"},
		{"idempotencyKey": e.key(), "reason": strings.Repeat("x", 501)},
	} {
		e.want(e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, b), 400, "")
	}
	if a, _ := e.balance("BRL"); a != avail-3000 {
		t.Errorf("available after refund %d, want %d", a, avail-3000)
	}
	e.advanceRefunds()
	list := e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil)
	e.want(list, 200, "")
	data, _ := list.Body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["status"] != "REFUNDED" {
		t.Fatalf("refunds: %s", list.Raw)
	}
	// Another refund, failed by the helper: the money comes back.
	f := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 1000})
	e.want(f, 201, "")
	failed := e.call("POST", "/test_helpers/refunds/"+f.str("id")+"/fail", e.acct.TestKey, nil)
	if failed.Status != 200 || failed.str("status") != "FAILED" {
		t.Fatalf("fail helper: %s", failed.Raw)
	}
	e.want(e.call("POST", "/test_helpers/refunds/"+f.str("id")+"/fail", e.acct.TestKey, nil), 409, "refund_not_open")
	e.want(e.call("POST", "/test_helpers/refunds/"+f.str("id")+"/fail", e.acct.LiveKey, nil), 404, "")
	if a, _ := e.balance("BRL"); a != avail-3000 {
		t.Errorf("available after failed refund %d, want %d", a, avail-3000)
	}
	// Fund the wallet, then refund the rest: the payment becomes REFUNDED.
	e.payPix(e.create(50000, "BRL", "PIX"))
	rest := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key()})
	e.want(rest, 201, "")
	if rest.num("amount") != 7000 {
		t.Errorf("default refund amount %d, want the remaining 7000", rest.num("amount"))
	}
	e.advanceRefunds()
	if g := e.call("GET", "/payments/"+id, e.acct.TestKey, nil); g.str("status") != "REFUNDED" {
		t.Errorf("after full refund: %s", g.Raw)
	}
	if ch := e.call("GET", "/charges/"+id, e.acct.TestKey, nil); ch.str("status") != "refunded" {
		t.Errorf("charge after full refund: %s", ch.Raw)
	}
	e.want(e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 1}), 409, "charge_not_refundable")
	list = e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil)
	if data, _ := list.Body["data"].([]any); len(data) != 3 || data[0].(map[string]any)["id"] != rest.str("id") {
		t.Errorf("refunds newest first: %s", list.Raw)
	}
	// Boleto's provider cannot refund.
	b := e.create(20000, "BRL", "BOLETO")
	e.want(e.call("POST", "/test_helpers/payments/"+b+"/transition", e.acct.TestKey, map[string]any{"status": "PAID"}), 200, "")
	e.want(e.call("POST", "/payments/"+b+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 100}), 422, "REFUND_NOT_SUPPORTED")
	e.want(e.call("POST", "/payments/tx_"+strings.Repeat("c", 26)+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key()}), 404, "")
	e.want(e.call("GET", "/payments/tx_"+strings.Repeat("c", 26)+"/refunds", e.acct.TestKey, nil), 404, "")
}

// TestConcurrentPartialRefunds: 20 concurrent partial refunds of one
// payment never refund more than its amount, and the ledger verifies.
func TestConcurrentPartialRefunds(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			e.payPix(e.create(100000, "BRL", "PIX")) // wallet funds
			id := e.create(10000, "BRL", "PIX")
			e.payPix(id)
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				ok, over int
			)
			for i := range 20 {
				wg.Go(func() {
					r := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey,
						map[string]any{"idempotencyKey": fmt.Sprintf("concurrent-%02d", i), "amount": 700})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case r.Status == 201:
						ok++
					case r.Status == 400 && r.code() == "refund_exceeds_amount":
						over++
					default:
						t.Errorf("refund %d: %d %s", i, r.Status, r.Raw)
					}
				})
			}
			wg.Wait()
			if ok != 14 || over != 6 {
				t.Errorf("%d refunds accepted and %d refused, want 14 and 6 (14 × 700 ≤ 10000 < 15 × 700)", ok, over)
			}
			e.advanceRefunds()
			list := e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil)
			var total int64
			data, _ := list.Body["data"].([]any)
			for _, r := range data {
				total += int64(r.(map[string]any)["amount"].(float64))
			}
			if total > 10000 {
				t.Errorf("refunded %d of 10000", total)
			}
			e.verifyLedger()
		})
	}
}

// TestRandomisedLedgerSequence pays, refunds, fails refunds, releases and
// cancels at random across currencies and methods, then checks that the
// ledger verifies and no balance is negative.
func TestRandomisedLedgerSequence(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rnd := rand.New(rand.NewPCG(seed, 7))
			e := newPayEnv(t, d.dsn(t))
			type kind struct {
				methods []string
				cur     string
			}
			kinds := []kind{
				{methods: []string{"PIX"}, cur: "BRL"}, {methods: []string{"BOLETO"}, cur: "BRL"},
				{methods: []string{"CREDIT_CARD"}, cur: "BRL"}, {methods: []string{"CREDIT_CARD"}, cur: "EUR"},
				{methods: []string{"MULTIBANCO"}, cur: "EUR"}, {methods: []string{"CRYPTO"}, cur: "USDT"},
				{methods: []string{"PIX", "CREDIT_CARD"}, cur: "BRL"},
			}
			var open, paid []string
			var refunds []string
			for range 60 {
				switch op := rnd.IntN(7); {
				case op <= 1 || len(open) == 0:
					k := kinds[rnd.IntN(len(kinds))]
					open = append(open, e.create(int64(100+rnd.IntN(100000)), k.cur, k.methods...))
				case op == 2:
					i := rnd.IntN(len(open))
					id := open[i]
					open = append(open[:i], open[i+1:]...)
					g := e.call("GET", "/payments/"+id, e.acct.TestKey, nil)
					if g.str("status") != "WAITING_PAYMENT" {
						continue // expired while the clock moved
					}
					methods, _ := g.Body["paymentMethods"].([]any)
					m := methods[rnd.IntN(len(methods))].(string)
					status := "PAID"
					if m == "CREDIT_CARD" {
						status = "APPROVED"
					}
					r := e.call("POST", "/test_helpers/payments/"+id+"/transition", e.acct.TestKey, map[string]any{"status": status, "paidWith": m})
					e.want(r, 200, "")
					paid = append(paid, id)
				case op == 3:
					i := rnd.IntN(len(open))
					if r := e.call("POST", "/payments/"+open[i]+"/cancel", e.acct.TestKey, nil); r.Status != 200 && r.code() != "charge_not_cancellable" {
						t.Fatalf("cancel: %d %s", r.Status, r.Raw)
					}
					open = append(open[:i], open[i+1:]...)
				case op == 4 && len(paid) > 0:
					id := paid[rnd.IntN(len(paid))]
					r := e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 1 + rnd.IntN(20000)})
					switch r.Status {
					case 201:
						refunds = append(refunds, r.str("id"))
					case 400, 409, 422:
					default:
						t.Fatalf("refund: %d %s", r.Status, r.Raw)
					}
				case op == 5 && len(refunds) > 0:
					e.call("POST", "/test_helpers/refunds/"+refunds[rnd.IntN(len(refunds))]+"/fail", e.acct.TestKey, nil)
				case op == 6:
					e.clock.Advance(time.Duration(rnd.IntN(20)) * 24 * time.Hour)
					if _, err := e.srv.App.Payments.ReleaseDue(context.Background()); err != nil {
						t.Fatal(err)
					}
					e.advanceRefunds()
				}
			}
			e.advanceRefunds()
			e.verifyLedger()
			ws, err := e.srv.App.Payments.Wallets(context.Background(), callerOf(e))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if w.Available < 0 || w.Pending < 0 {
					t.Errorf("negative wallet %+v", w)
				}
			}
		})
	}
}
