package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/ports"
)

// A failed refund gives back exactly what its debit took: the available
// part to available, and the pending part to pending as the holds it came
// from (their charges and release times), so held card money does not
// become available for a payout by way of a refund that fails.
func TestFailedRefundRestoresHolds(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			e.payPix(e.create(1000, "BRL", "PIX")) // 990 available
			cardA := e.approveCard(e.acct.TestKey, 10000)
			e.clock.Advance(24 * time.Hour)
			e.approveCard(e.acct.TestKey, 5000) // card B, released a day after card A
			avail, pending := e.balance("BRL")
			if avail != 990 || pending != 9313+4636 {
				t.Fatalf("before the refund: available %d pending %d, want 990 and %d", avail, pending, 9313+4636)
			}
			before := e.holds(e.acct.AccountID)
			if len(before) != 2 {
				t.Fatalf("holds before the refund: %v", before)
			}

			// 9000: 990 from available, then 8010 from pending, the hold
			// released last first: all of card B's 4636, then 3374 of card A's.
			r := e.call("POST", "/payments/"+cardA+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 9000})
			e.want(r, 201, "")
			if a, p := e.balance("BRL"); a != 0 || p != pending-8010 {
				t.Fatalf("after the refund: available %d pending %d, want 0 and %d", a, p, pending-8010)
			}
			f := e.call("POST", "/test_helpers/refunds/"+r.str("id")+"/fail", e.acct.TestKey, nil)
			if f.Status != 200 || f.str("status") != "FAILED" {
				t.Fatalf("fail helper: %d %s", f.Status, f.Raw)
			}
			if a, p := e.balance("BRL"); a != avail || p != pending {
				t.Errorf("after the failure: available %d pending %d, want %d and %d as before the refund", a, p, avail, pending)
			}
			if after := e.holds(e.acct.AccountID); !equalHolds(after, before) {
				t.Errorf("holds after the failure %v, want %v as before the refund", after, before)
			}
			e.want(e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 8950, "destination": map[string]any{"pix_key": "529.982.247-25"}}),
				422, "insufficient_balance")
			e.verifyLedger()

			// The holds are released when they were due: card A's, then card B's.
			e.clock.Advance(29*24*time.Hour + time.Minute)
			e.releaseDue()
			if a, p := e.balance("BRL"); a != 990+9313 || p != 4636 {
				t.Errorf("after card A's release: available %d pending %d, want %d and 4636", a, p, 990+9313)
			}
			e.clock.Advance(24 * time.Hour)
			e.releaseDue()
			if a, p := e.balance("BRL"); a != 990+9313+4636 || p != 0 {
				t.Errorf("after card B's release: available %d pending %d, want %d and 0", a, p, 990+9313+4636)
			}
			e.verifyLedger()

			// A hold whose release time passed while its money was out is
			// reopened due, and the next release pass releases it.
			late := e.srv.NewAccount(t, "Loja Atrasada")
			cardC := e.approveCard(late.TestKey, 10000)
			r = e.call("POST", "/payments/"+cardC+"/refund", late.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 9000})
			e.want(r, 201, "")
			e.clock.Advance(31 * 24 * time.Hour)
			e.want(e.call("POST", "/test_helpers/refunds/"+r.str("id")+"/fail", late.TestKey, nil), 200, "")
			hs := e.holds(late.AccountID)
			if len(hs) != 2 || !hs[0].ReleaseAt.Equal(hs[1].ReleaseAt) || hs[0].ReleaseAt.After(e.clock.Now()) {
				t.Errorf("holds after a late failure: %v, want two of card C's, due", hs)
			}
			e.releaseDue()
			w := e.call("GET", "/wallets/balance?currency=BRL", late.TestKey, nil)
			if w.num("available") != 9313 || w.num("pending") != 0 {
				t.Errorf("after a late failure and a release pass: %s, want 9313 available", w.Raw)
			}
			e.verifyLedger()
		})
	}
}

// A refund whose debit recorded no hold takes (written before they were
// recorded) gives its pending part back to pending as one hold of its
// charge due at the failure, which the next release pass releases: never
// straight to available.
func TestFailedRefundWithoutHoldTakes(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			card := e.approveCard(e.acct.TestKey, 10000)
			held := e.holds(e.acct.AccountID)
			r := e.call("POST", "/payments/"+card+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 9000})
			e.want(r, 201, "")
			if _, err := e.srv.App.DB.Bun().ExecContext(context.Background(), `DELETE FROM ledger_hold_takes WHERE account_id = ?`, e.acct.AccountID); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(time.Hour)
			e.want(e.call("POST", "/test_helpers/refunds/"+r.str("id")+"/fail", e.acct.TestKey, nil), 200, "")
			if a, p := e.balance("BRL"); a != 0 || p != 9313 {
				t.Errorf("after the failure: available %d pending %d, want 0 and 9313", a, p)
			}
			hs := e.holds(e.acct.AccountID)
			if len(held) != 1 || len(hs) != 2 || hs[0].Amount != 9000 || hs[0].ReleaseAt.After(e.clock.Now()) ||
				hs[1].Amount != 313 || !hs[1].ReleaseAt.Equal(held[0].ReleaseAt) || hs[0].ChargeID != held[0].ChargeID {
				t.Errorf("holds after the failure %v (before the refund %v), want 9000 of the charge due now and 313 as it was", hs, held)
			}
			e.verifyLedger()
			e.want(e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 8950, "destination": map[string]any{"pix_key": "529.982.247-25"}}),
				422, "insufficient_balance")
			e.releaseDue()
			if a, p := e.balance("BRL"); a != 9000 || p != 313 {
				t.Errorf("after a release pass: available %d pending %d, want 9000 and 313", a, p)
			}
			e.verifyLedger()
		})
	}
}

// A refund_failed entry that gives back to available what its refund took
// from pending is reported, even with the wallet and the holds agreeing
// with the postings (what a failed refund wrote before it gave back holds).
func TestLedgerVerifyFindsRefundFailedSplit(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			clean := e.srv.NewAccount(t, "Loja Limpa")
			for _, key := range []string{e.acct.TestKey, clean.TestKey} {
				id := e.approveCard(key, 10000)
				r := e.call("POST", "/payments/"+id+"/refund", key, map[string]any{"idempotencyKey": e.key(), "amount": 9000})
				e.want(r, 201, "")
				e.want(e.call("POST", "/test_helpers/refunds/"+r.str("id")+"/fail", key, nil), 200, "")
			}
			e.verifyLedger()

			// Move what the failure gave back to pending over to available,
			// in the wallet and the holds too, so only the split is wrong.
			ctx := context.Background()
			db := e.srv.App.DB.Bun()
			acct := e.acct.AccountID
			var fid string
			var back int64
			if err := db.NewRaw(`SELECT le.id, COALESCE(SUM(lp.amount), 0) FROM ledger_entries le
				LEFT JOIN ledger_postings lp ON lp.entry_id = le.id AND lp.ledger_account = 'merchant_pending'
				WHERE le.kind = 'refund_failed' AND le.account_id = ? GROUP BY le.id`, acct).Scan(ctx, &fid, &back); err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{`UPDATE ledger_postings SET ledger_account = 'merchant_available' WHERE entry_id = ? AND ledger_account = 'merchant_pending'`, []any{fid}},
				{`UPDATE wallet_balances SET available = available + ?, pending = pending - ? WHERE account_id = ?`, []any{back, back, acct}},
				{`DELETE FROM ledger_holds WHERE account_id = ? AND amount = 9000`, []any{acct}},
			} {
				if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
					t.Fatalf("%s: %v", q.sql, err)
				}
			}
			problems, err := e.srv.App.Payments.VerifyLedger(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 || !strings.Contains(problems[0], "refund_failed entry gives back 9000 to available and 0 to pending, its debit took 0 and 9000") ||
				!strings.Contains(problems[0], acct) || strings.Contains(problems[0], clean.AccountID) {
				t.Errorf("problems %q, want the failed refund's split in %s alone", problems, acct)
			}
		})
	}
}

// approveCard pays a card payment of amount (APPROVED now) in the
// account of apikey and returns its tx_ id.
func (e *payEnv) approveCard(apikey string, amount int64) string {
	e.t.Helper()
	r := e.call("POST", "/payments", apikey, map[string]any{"amount": amount, "currency": "BRL",
		"paymentMethods": []string{"CREDIT_CARD"}, "idempotencyKey": e.key()})
	e.want(r, 201, "")
	id := r.str("id")
	e.want(e.call("POST", "/test_helpers/payments/"+id+"/transition", apikey, map[string]any{"status": "APPROVED", "paidWith": "CREDIT_CARD"}), 200, "")
	return id
}

// holds lists the account's holds of pending money, in release order.
func (e *payEnv) holds(accountID string) []ports.Hold {
	e.t.Helper()
	all, err := e.srv.App.DB.ListDueHolds(context.Background(), e.clock.Now().Add(100*365*24*time.Hour), 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []ports.Hold
	for _, h := range all {
		if h.Scope.AccountID == accountID {
			h.ID = 0
			out = append(out, h)
		}
	}
	return out
}

func (e *payEnv) releaseDue() {
	e.t.Helper()
	if _, err := e.srv.App.Payments.ReleaseDue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// equalHolds compares holds as money per (charge, release time): a hold
// partly taken and reopened is two rows for one.
func equalHolds(a, b []ports.Hold) bool {
	sum := func(hs []ports.Hold) map[string]int64 {
		m := map[string]int64{}
		for _, h := range hs {
			m[fmt.Sprintf("%s@%s", h.ChargeID, h.ReleaseAt.UTC().Format(time.RFC3339Nano))] += h.Amount
		}
		return m
	}
	sa, sb := sum(a), sum(b)
	if len(sa) != len(sb) {
		return false
	}
	for k, v := range sa {
		if sb[k] != v {
			return false
		}
	}
	return true
}
