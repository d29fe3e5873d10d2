package httpapi_test

import (
	"strings"
	"testing"
)

// TestSplitRefunds: refunds of a split charge take back each seller's part
// in proportion (cumulatively: a full refund takes back every share
// exactly) or as reverseSplits says; a seller whose wallet cannot cover
// owes its platform, which covers at once, and the seller's next share
// repays the platform first; a failed refund gives every wallet back what
// it took; a MED return follows the same rule. The ledger verifies after
// each step. Both databases.
func TestSplitRefunds(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			s := splitScene{e: e, a: e.newSeller("Vendedor A"), b: e.newSeller("Vendedor B")}
			// 10000 by Pix: net 9901; A a fixed 3000, B 12.50 % → 1237;
			// the platform 5664.
			id := s.charge(10000, s.a, 3000, s.b, "12.50")
			s.wallets(t, "paid", 5664, 3000, 1237)

			// Half: A gives back 3000 × 5000 / 10000 = 1500, B 1237 ×
			// 5000 / 10000 = 618.5 → 618, the platform the other 2882.
			e.want(s.refund(id, 5000, nil), 201, "")
			s.wallets(t, "after half", 5664-2882, 1500, 619)
			s.reversed(t, id, 1500, 618)
			e.verifyLedger()

			// As reverseSplits says: A gives back all 1500 it has left of
			// a refund of 2000, B nothing, the platform 500.
			for _, bad := range []struct {
				name string
				rs   []any
				code string
			}{
				{"more than A has left", []any{map[string]any{"account": s.a, "amount": 1501}}, "split_reversal_invalid"},
				{"more than the refund", []any{map[string]any{"account": s.a, "amount": 1500}, map[string]any{"account": s.b, "amount": 501}}, "split_reversal_invalid"},
				{"not a split of it", []any{map[string]any{"account": e.newSeller("C"), "amount": 1}}, "split_reversal_invalid"},
				{"not an account", []any{map[string]any{"account": "tx_1", "amount": 1}}, "parameter_invalid"},
				{"negative", []any{map[string]any{"account": s.a, "amount": -1}}, "parameter_invalid"},
			} {
				if r := s.refund(id, 2000, bad.rs); r.code() != bad.code || !strings.HasPrefix(r.param(), "reverseSplits") {
					t.Errorf("%s: %s", bad.name, r.Raw)
				}
			}
			e.want(s.refund(id, 2000, []any{map[string]any{"account": s.a, "amount": 1500}}), 201, "")
			s.wallets(t, "after the explicit refund", 2782-500, 0, 619)
			s.reversed(t, id, 3000, 618)

			// B empties its wallet, the platform takes a payment of its
			// own; the last 3000 refunded take back B's 619 left (1237 in
			// all), which B cannot cover: the platform advances it and B
			// owes it.
			s.drain(t, s.b)
			e.payPix(e.create(10000, "BRL", "PIX"))
			platform := s.avail("")
			e.want(s.refund(id, 3000, nil), 201, "")
			s.reversed(t, id, 3000, 1237)
			s.wallets(t, "after the full refund", platform-3000, 0, 0)
			if w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, s.b, nil); w.num("owed") != 619 {
				t.Errorf("B owes: %s, want 619", w.Raw)
			}
			e.verifyLedger()

			// B's next share repays the platform first: 20000 with B 10 %
			// of 19802 = 1980, of which 619 goes to the platform.
			s.charge(20000, s.b, "10")
			s.wallets(t, "after B's next share", platform-3000+(19802-1980)+619, 0, 1980-619)
			if owed := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, s.b, nil).num("owed"); owed != 0 {
				t.Errorf("B still owes %d", owed)
			}
			e.verifyLedger()

			s.failedRefund(t)
			s.medReturn(t)
		})
	}
}

// splitScene is a platform (the env's account) with two sellers.
type splitScene struct {
	e    *payEnv
	a, b string
}

// charge creates a split Pix charge (splits as account, amount or percent
// pairs), pays it and returns its ch_ id.
func (s splitScene) charge(amount int64, splits ...any) string {
	s.e.t.Helper()
	var items []any
	for i := 0; i+1 < len(splits); i += 2 {
		it := map[string]any{"account": splits[i]}
		if p, ok := splits[i+1].(string); ok {
			it["percent"] = p
		} else {
			it["amount"] = splits[i+1]
		}
		items = append(items, it)
	}
	c := s.e.as("POST", "/charges", s.e.acct.TestKey, "", map[string]any{"amount": amount, "payment_method": "pix", "splits": items},
		"Idempotency-Key", s.e.key())
	s.e.want(c, 201, "")
	s.e.want(s.e.as("POST", "/test_helpers/charges/"+c.str("id")+"/pay", s.e.acct.TestKey, "", map[string]any{}), 200, "")
	return c.str("id")
}

// refund refunds amount of charge id by the payments format, with
// reverseSplits when rs is not nil.
func (s splitScene) refund(id string, amount int64, rs []any) apiResp {
	s.e.t.Helper()
	body := map[string]any{"idempotencyKey": s.e.key(), "amount": amount}
	if rs != nil {
		body["reverseSplits"] = rs
	}
	return s.e.as("POST", "/payments/tx_"+strings.TrimPrefix(id, "ch_")+"/refund", s.e.acct.TestKey, "", body)
}

// wallets checks the available balances of the platform and both sellers.
func (s splitScene) wallets(t *testing.T, when string, platform, a, b int64) {
	t.Helper()
	for acct, want := range map[string]int64{"": platform, s.a: a, s.b: b} {
		if got := s.avail(acct); got != want {
			t.Errorf("%s: wallet of %q: available %d, want %d", when, acct, got, want)
		}
	}
}

// avail is an account's available balance ("" the platform).
func (s splitScene) avail(acct string) int64 {
	s.e.t.Helper()
	return s.e.as("GET", "/wallets/balance?currency=BRL", s.e.acct.TestKey, acct, nil).num("available")
}

// reversed checks what the charge says each split gave back.
func (s splitScene) reversed(t *testing.T, id string, want ...int64) {
	t.Helper()
	c := s.e.as("GET", "/charges/"+id, s.e.acct.TestKey, "", nil)
	splits, _ := c.Body["splits"].([]any)
	for i, w := range want {
		if got := splits[i].(map[string]any)["amount_reversed"]; got != float64(w) {
			t.Errorf("split %d of %s gave back %v, want %d", i, id, got, w)
		}
	}
}

// drain pays a seller's whole available balance out.
func (s splitScene) drain(t *testing.T, seller string) {
	t.Helper()
	var fee int64 = 50
	for range 3 {
		avail := s.e.as("GET", "/wallets/balance?currency=BRL", s.e.acct.TestKey, seller, nil).num("available")
		if avail == 0 {
			return
		}
		po := s.e.as("POST", "/payouts", s.e.acct.TestKey, seller, map[string]any{"amount": max(avail-fee, 1),
			"destination": map[string]any{"pix_key": "52998224725"}}, "Idempotency-Key", s.e.key())
		s.e.want(po, 201, "")
		fee = po.num("fee")
	}
	t.Fatalf("could not empty the wallet of %s", seller)
}

// failedRefund: a refund that fails gives the sellers and the platform
// back what it took, and the charge's splits what they gave back.
func (s splitScene) failedRefund(t *testing.T) {
	t.Helper()
	e := s.e
	before := map[string]int64{"": s.avail(""), s.a: s.avail(s.a), s.b: s.avail(s.b)}
	id := s.charge(10000, s.a, 3000, s.b, "12.50")
	r := s.refund(id, 4000, nil)
	e.want(r, 201, "")
	s.reversed(t, id, 1200, 494)
	e.want(e.as("POST", "/test_helpers/refunds/"+r.str("id")+"/fail", e.acct.TestKey, "", nil), 200, "")
	e.advanceRefunds()
	s.reversed(t, id, 0, 0)
	s.wallets(t, "after the failed refund", before[""]+5664, before[s.a]+3000, before[s.b]+1237)
	e.verifyLedger()
}

// medReturn: the payer's PSP takes back 6000 of a split charge: A gives
// back 1800, B 742, the platform the rest; the ledger verifies.
func (s splitScene) medReturn(t *testing.T) {
	t.Helper()
	e := s.e
	id := s.charge(10000, s.a, 3000, s.b, "12.50")
	before := s.avail(s.a)
	e.want(e.as("POST", "/test_helpers/charges/"+id+"/med_return", e.acct.TestKey, "", map[string]any{"reason": "fraud", "amount": 6000}), 200, "")
	s.reversed(t, id, 1800, 742)
	if got := s.avail(s.a); got != before-1800 {
		t.Errorf("A after the MED return: %d, want %d", got, before-1800)
	}
	e.verifyLedger()
}

// TestSubaccountOwnChargeReturn: a MED return on a charge a sub-account
// collected itself, beyond its wallet, becomes its debt to its platform,
// which covers it at once; the sub-account's next payment repays the
// platform first. Both databases.
func TestSubaccountOwnChargeReturn(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			s := splitScene{e: e, a: e.newSeller("A"), b: e.newSeller("B")}
			e.payPix(e.create(100000, "BRL", "PIX")) // the platform has money to cover
			own := func(amount int64) string {
				c := e.as("POST", "/charges", e.acct.TestKey, s.a, map[string]any{"amount": amount, "payment_method": "pix"},
					"Idempotency-Key", e.key())
				e.want(c, 201, "")
				e.want(e.as("POST", "/test_helpers/charges/"+c.str("id")+"/pay", e.acct.TestKey, s.a, map[string]any{}), 200, "")
				return c.str("id")
			}
			id := own(10000) // A's net 9901
			s.drain(t, s.a)
			platform := s.avail("")
			e.want(e.as("POST", "/test_helpers/charges/"+id+"/med_return", e.acct.TestKey, s.a, map[string]any{"reason": "fraud", "amount": 4000}), 200, "")
			if w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, s.a, nil); w.num("owed") != 4000 || w.num("available") != 0 {
				t.Errorf("A after the return: %s, want owed 4000", w.Raw)
			}
			if got := s.avail(""); got != platform-4000 {
				t.Errorf("the platform covered %d, want 4000", platform-got)
			}
			e.verifyLedger()
			own(10000) // 9901: 4000 to the platform, 5901 to A
			if w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, s.a, nil); w.num("owed") != 0 || w.num("available") != 5901 {
				t.Errorf("A after its next payment: %s, want available 5901", w.Raw)
			}
			if got := s.avail(""); got != platform {
				t.Errorf("the platform has %d after A repaid, want %d", got, platform)
			}
			e.verifyLedger()
		})
	}
}
