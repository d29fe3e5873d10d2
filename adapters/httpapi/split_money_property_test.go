package httpapi_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TestSplitMoneyProperty: a platform with three sellers runs 60 random
// operations — split charges paid, partial and full refunds (in
// proportion or by reverseSplits), refunds failed or completed, MED
// returns, sellers emptying their wallets by payout — and after each one the ledger
// verifies (every share, reversal, advance and debt) and the money is
// conserved: what all the wallets hold, less the platform's debt to Quita
// (a seller's debt is the platform's claim, so the two cancel), is the
// nets credited less what refunds, returns and payouts took. The seed is
// logged. Both databases.
func TestSplitMoneyProperty(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, seed>>9))
			e := newPayEnv(t, d.dsn(t))
			s := splitScene{e: e, a: e.newSeller("A"), b: e.newSeller("B")}
			sellers := []string{s.a, s.b, e.newSeller("C")}
			type paid struct {
				id    string
				left  int64
				split []string
			}
			var (
				charges []*paid
				refunds []string // refund ids that may still fail
				want    int64    // Σ (available + pending − owed) over every wallet
			)
			net := func(id string, amount int64) int64 {
				raw, _ := domain.ParseChargeID(id)
				c, err := e.srv.App.DB.GetCharge(context.Background(), ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeTest}, raw)
				if err != nil {
					t.Fatal(err)
				}
				return c.Fees().Net(amount)
			}
			// A seller's debt is owed to the platform, whose claim cancels
			// it: the group holds its wallets less the platform's own debt.
			holdings := func() int64 {
				sum := holdingsOf(e, "")
				for _, acct := range sellers {
					w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, acct, nil)
					sum += w.num("available") + w.num("pending")
				}
				return sum
			}
			for step := range 60 {
				var did string
				switch op := rng.IntN(10); {
				case op < 3 || len(charges) == 0:
					amount := 1000 + rng.Int64N(50_000)
					var args []any
					var named []string
					for _, sl := range sellers {
						switch rng.IntN(3) {
						case 0:
							args = append(args, sl, 1+rng.Int64N(amount/4))
							named = append(named, sl)
						case 1:
							args = append(args, sl, []string{"5", "12.50", "20.01"}[rng.IntN(3)])
							named = append(named, sl)
						}
					}
					id := s.charge(amount, args...)
					charges = append(charges, &paid{id: id, left: amount, split: named})
					want += net(id, amount)
					did = "charge " + id
				case op < 6:
					c := charges[rng.IntN(len(charges))]
					if c.left == 0 {
						continue
					}
					amount := 1 + rng.Int64N(c.left)
					if rng.IntN(3) == 0 {
						amount = c.left
					}
					var rs []any
					if rng.IntN(4) == 0 && len(c.split) > 0 {
						rs = []any{map[string]any{"account": c.split[0], "amount": rng.Int64N(2)}}
					}
					r := s.refund(c.id, amount, rs)
					switch {
					case r.Status == 201:
						c.left -= amount
						want -= amount
						refunds = append(refunds, r.str("id"))
					case r.code() == "insufficient_balance" || r.code() == "split_reversal_invalid" || r.code() == "charge_not_refundable":
					default:
						t.Fatalf("step %d: refund %d of %s: %s", step, amount, c.id, r.Raw)
					}
					did = "refund of " + c.id
				case op < 7 && len(refunds) > 0:
					i := rng.IntN(len(refunds))
					r := e.as("POST", "/test_helpers/refunds/"+refunds[i]+"/fail", e.acct.TestKey, "", nil)
					if r.Status == 200 {
						want += r.num("amount")
						for _, c := range charges {
							if strings.TrimPrefix(c.id, "ch_") == strings.TrimPrefix(r.str("transactionId"), "tx_") {
								c.left += r.num("amount")
							}
						}
					} else if r.code() != "refund_not_open" {
						t.Fatalf("step %d: fail refund: %s", step, r.Raw)
					}
					refunds = append(refunds[:i], refunds[i+1:]...)
					did = "fail refund"
				case op < 8:
					c := charges[rng.IntN(len(charges))]
					if c.left == 0 {
						continue
					}
					amount := 1 + rng.Int64N(c.left)
					e.want(e.as("POST", "/test_helpers/charges/"+c.id+"/med_return", e.acct.TestKey, "",
						map[string]any{"reason": "fraud", "amount": amount}), 200, "")
					c.left -= amount
					want -= amount
					did = "MED return of " + c.id
				case op < 9:
					e.advanceRefunds() // the open refunds complete
					refunds = nil
					did = "advance refunds"
				default:
					seller := sellers[rng.IntN(len(sellers))]
					before := holdings()
					s.drain(t, seller)
					want -= before - holdings()
					did = "drain " + seller
				}
				if got := holdings(); got != want {
					t.Fatalf("step %d (%s): the wallets hold %d net of debt, want %d", step, did, got, want)
				}
				e.verifyLedger()
			}
		})
	}
}

// holdingsOf is a wallet's available plus pending less its debt.
func holdingsOf(e *payEnv, acct string) int64 {
	w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, acct, nil)
	return w.num("available") + w.num("pending") - w.num("owed")
}
