package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TestConcurrentRefundsShareTheWallet: 20 payments are refunded in full
// at once, each request sent twice with its key (the creates of one moment
// go to the database together). The wallet holds the net of the 20
// payments, enough for 19 refunds: exactly 19 are accepted, the other
// answers 422 insufficient_balance (both of its sends), each key's two
// answers are the same refund, and the wallet is never overdrawn. One pass
// of the worker then takes every refund — two of them of one payment — to
// REFUNDED with its payment.refunded events in order, and the ledger
// verifies.
func TestConcurrentRefundsShareTheWallet(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			const n = 20
			ids := make([]string, n)
			for i := range ids {
				ids[i] = e.create(10000, "BRL", "PIX")
				e.payPix(ids[i])
			}
			if a, _ := e.balance("BRL"); a != n*9901 {
				t.Fatalf("available %d, want %d", a, n*9901)
			}
			type answer struct {
				status int
				code   string
				raw    []byte
			}
			answers := make([][2]answer, n)
			var wg sync.WaitGroup
			for i := range n {
				for j := range 2 {
					wg.Go(func() {
						r := e.call("POST", "/payments/"+ids[i]+"/refund", e.acct.TestKey,
							map[string]any{"idempotencyKey": fmt.Sprintf("wallet-share-%02d", i)})
						answers[i][j] = answer{r.Status, r.code(), r.Raw}
					})
				}
			}
			wg.Wait()
			ok, short := 0, 0
			for i, a := range answers {
				switch {
				case a[0].status == 201 && a[1].status == 201 && bytes.Equal(a[0].raw, a[1].raw):
					ok++
				case a[0].code == "insufficient_balance" && a[1].code == "insufficient_balance":
					short++
				default:
					t.Errorf("payment %d: answers %d %s / %d %s", i, a[0].status, a[0].raw, a[1].status, a[1].raw)
				}
			}
			if ok != n-1 || short != 1 {
				t.Fatalf("%d refunds accepted, %d refused for the balance; want %d and 1", ok, short, n-1)
			}
			if a, _ := e.balance("BRL"); a != n*9901-(n-1)*10000 {
				t.Errorf("available %d, want %d", a, n*9901-(n-1)*10000)
			}
			// A second refund of a payment refunded in part, and funds for it.
			e.payPix(e.create(20000, "BRL", "PIX"))
			var partly string
			for i, a := range answers {
				if a[0].status != 201 {
					partly = ids[i]
				}
			}
			for _, amount := range []int64{3000, 2000} {
				e.want(e.call("POST", "/payments/"+partly+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": amount}), 201, "")
			}

			if _, err := e.srv.App.Payments.AdvanceRefunds(context.Background()); err != nil {
				t.Fatal(err)
			}
			scope := ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeTest}
			for _, id := range ids {
				list := e.call("GET", "/payments/"+id+"/refunds", e.acct.TestKey, nil)
				data, _ := list.Body["data"].([]any)
				for _, r := range data {
					if st := r.(map[string]any)["status"]; st != "REFUNDED" {
						t.Errorf("refund of %s is %v after one pass", id, st)
					}
				}
				want := "REFUNDED"
				if id == partly {
					want = "PAID"
					if len(data) != 2 {
						t.Errorf("payment refunded in part has %d refunds", len(data))
					}
				}
				if g := e.call("GET", "/payments/"+id, e.acct.TestKey, nil); g.str("status") != want {
					t.Errorf("payment %s is %s, want %s", id, g.str("status"), want)
				}
				// Each refund announced PENDING, IN_PROGRESS, REFUNDED in order.
				evs, err := e.srv.App.DB.ListChargeEvents(context.Background(), scope, strings.TrimPrefix(id, "tx_"))
				if err != nil {
					t.Fatal(err)
				}
				steps := map[string][]string{}
				for _, ev := range evs {
					if ev.Type != domain.EventPaymentRefunded {
						continue
					}
					var env domain.LegacyEnvelope
					if err := json.Unmarshal(ev.Payload, &env); err != nil {
						t.Fatal(err)
					}
					steps[env.Data.RefundID] = append(steps[env.Data.RefundID], env.Data.RefundStatus)
				}
				if len(steps) != len(data) {
					t.Errorf("payment %s: refund events for %d refunds, want %d", id, len(steps), len(data))
				}
				for rid, st := range steps {
					if !slices.Equal(st, []string{"PENDING", "IN_PROGRESS", "REFUNDED"}) {
						t.Errorf("refund %s events %v", rid, st)
					}
				}
			}
			e.verifyLedger()
		})
	}
}

// TestOnePassDrivesSeveralChunks: one worker pass takes every open refund
// — more than one claim's chunk, driven in parallel lanes — to REFUNDED,
// each exactly once, and says how many it handled.
func TestOnePassDrivesSeveralChunks(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			// 450 requests on one key in a few seconds: measure the worker,
			// not the per-key rate limit (a quiet machine sent them faster
			// than its burst and got 429s).
			if err := e.srv.App.Dashboard.GuardSettings.Set(context.Background(), e.acct.AccountID,
				ports.AccountSettings{RateLimitPerSecond: 1_000_000, RateLimitBurst: 1_000_000}); err != nil {
				t.Fatal(err)
			}
			const n = 150 // > 2 chunks of 64
			ids := make([]string, n)
			var wg sync.WaitGroup
			for i := range ids {
				wg.Go(func() {
					ids[i] = e.create(1000, "BRL", "PIX")
					e.payPix(ids[i])
				})
				if i%16 == 15 {
					wg.Wait()
				}
			}
			wg.Wait()
			for i := range ids {
				wg.Go(func() {
					e.want(e.call("POST", "/payments/"+ids[i]+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 500}), 201, "")
				})
				if i%16 == 15 {
					wg.Wait()
				}
			}
			wg.Wait()
			handled, err := e.srv.App.Payments.AdvanceRefunds(context.Background())
			if err != nil || handled != n {
				t.Fatalf("one pass handled %d (%v), want %d", handled, err, n)
			}
			if again, err := e.srv.App.Payments.AdvanceRefunds(context.Background()); err != nil || again != 0 {
				t.Errorf("a second pass found %d open refunds (%v)", again, err)
			}
			scope := ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeTest}
			for _, id := range ids {
				rs, err := e.srv.App.DB.ListRefunds(context.Background(), scope, strings.TrimPrefix(id, "tx_"))
				if err != nil || len(rs) != 1 || rs[0].Status != domain.RefundRefunded {
					t.Fatalf("refunds of %s: %+v %v", id, rs, err)
				}
			}
			e.verifyLedger()
		})
	}
}
