package httpapi_test

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
	"github.com/quitapix/quita/quitatest"
)

// TestSubaccountPayoutDefaultsToItsKey: a sub-account's payout without a
// destination goes to its payout_pix_key, whether the platform acts for it
// or its own key asks; without a key it is 422 payout_pix_key_missing;
// any other account must still name a key.
func TestSubaccountPayoutDefaultsToItsKey(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			seller := e.newSeller("Loja Vendedora") // payout_pix_key vendas@example.com
			e.fundAs(seller, 20000)
			key := sellerKey(t, e, seller)
			for _, who := range []struct{ key, acct string }{{e.acct.TestKey, seller}, {key, ""}} {
				p := e.as("POST", "/payouts", who.key, who.acct, map[string]any{"amount": 1000}, "Idempotency-Key", e.key())
				e.want(p, 201, "")
				dest, _ := p.Body["destination"].(map[string]any)
				if dest["type"] != "email" || dest["key"] != "v***@example.com" {
					t.Errorf("default destination: %s", p.Raw)
				}
			}
			// A key named still wins.
			p := e.as("POST", "/payouts", e.acct.TestKey, seller, map[string]any{"amount": 1000,
				"destination": map[string]any{"pix_key": "529.982.247-25"}}, "Idempotency-Key", e.key())
			if p.Status != 201 || p.Body["destination"].(map[string]any)["type"] != "cpf" {
				t.Errorf("named destination: %s", p.Raw)
			}
			// The key is read when the payout is made: cleared, it is gone.
			e.want(e.as("POST", "/subaccounts/"+seller, e.acct.TestKey, "", map[string]any{"payout_pix_key": ""}), 200, "")
			r := e.as("POST", "/payouts", e.acct.TestKey, seller, map[string]any{"amount": 1000}, "Idempotency-Key", e.key())
			if r.Status != 422 || r.code() != "payout_pix_key_missing" || r.param() != "destination" {
				t.Errorf("without a payout key: %d %s", r.Status, r.Raw)
			}
			e.fundAs("", 5000)
			r = e.as("POST", "/payouts", e.acct.TestKey, "", map[string]any{"amount": 1000}, "Idempotency-Key", e.key())
			if r.Status != 400 || r.code() != "parameter_missing" || r.param() != "destination.pix_key" {
				t.Errorf("the platform without a destination: %d %s", r.Status, r.Raw)
			}
			e.verifyLedger()
		})
	}
}

// fundLive credits acct's live wallet with a Pix of amount to a live
// charge of it (made by the platform's live key acting for it, "" for the
// platform), as the PSP's notification would, and returns what the
// wallet gained.
func (e *payEnv) fundLive(acct string, amount int64) int64 {
	e.t.Helper()
	owner := acct
	if owner == "" {
		owner = e.acct.AccountID
	}
	before := e.available(e.acct.LiveKey, acct)
	c := e.as("POST", "/charges", e.acct.LiveKey, acct, map[string]any{"amount": amount, "payment_method": "pix"}, "Idempotency-Key", e.key())
	e.want(c, 201, "")
	raw, _ := domain.ParseChargeID(c.str("id"))
	e2e, err := domain.NewEndToEndID("99999999", e.clock.Now(), rand.Reader)
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.srv.App.Charges.ApplyPixPayment(context.Background(), ports.Scope{AccountID: owner, Mode: domain.ModeLive}, raw,
		domain.PixPayment{EndToEndID: e2e, Amount: amount, PaidAt: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.available(e.acct.LiveKey, acct) - before
}

// livePayouts lists acct's live payouts, newest first.
func (e *payEnv) livePayouts(acct string) []map[string]any {
	e.t.Helper()
	l := e.as("GET", "/payouts", e.acct.LiveKey, acct, nil)
	e.want(l, 200, "")
	var out []map[string]any
	for _, it := range l.Body["data"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// TestSubaccountAutoPayouts: with auto_payout on, a live sub-account's
// whole available balance (less the fee) goes to its payout key once per
// Brasília day — once even when two processes run the pass at the same
// time, or a pass runs again after losing its mark; the next day pays
// again. A balance within the fee, a sub-account with auto_payout off, a
// disabled one and test-mode money are not paid out.
func TestSubaccountAutoPayouts(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			dsn := d.dsn(t)
			e := newPayEnv(t, dsn)
			// A second process over the same database, with its own
			// idempotency cache: only the database keeps them apart.
			twin := quitatest.NewServer(t, quitatest.Options{DatabaseURL: dsn, Clock: e.clock})
			ctx := context.Background()

			auto, small, off, gone := e.newSeller("Automática"), e.newSeller("Pequena"), e.newSeller("Manual"), e.newSeller("Desativada")
			for _, s := range []string{auto, small, gone} {
				// A Pix-out fee of 50 centavos (the test server's default is none).
				if err := e.srv.App.Payments.SetAccountFee(ctx, s, domain.FeeKeyPixOut, domain.FeeSchedule{Platform: domain.Fee{Fixed: 50}}); err != nil {
					t.Fatal(err)
				}
				u := e.as("POST", "/subaccounts/"+s, e.acct.TestKey, "", map[string]any{"auto_payout": true})
				if u.Status != 200 || u.Body["auto_payout"] != true {
					t.Fatalf("auto_payout on: %s", u.Raw)
				}
			}
			e.want(e.as("POST", "/subaccounts/"+auto, e.acct.TestKey, "", map[string]any{"payout_pix_key": ""}), 400, "parameter_invalid")
			r := e.as("POST", "/subaccounts", e.acct.TestKey, "", map[string]any{"name": "Sem Chave", "document": sellerCPF,
				"email": "s@example.com", "auto_payout": true})
			if r.Status != 400 || r.param() != "auto_payout" {
				t.Errorf("auto_payout without a key: %d %s", r.Status, r.Raw)
			}

			got := e.fundLive(auto, 10000)
			testFunds := e.fundAs(auto, 3000)
			e.fundLive(off, 10000)
			e.fundLive(gone, 10000)
			e.fundLive("", 10000)
			e.want(e.transfer(e.acct.LiveKey, "", small, 40), 201, "") // within the 50 fee
			e.want(e.as("POST", "/subaccounts/"+gone+"/disable", e.acct.TestKey, "", nil), 200, "")

			day := domain.BrasiliaDate(e.clock.Now()).String()
			var wg sync.WaitGroup
			for _, svc := range []*quitatest.Server{e.srv, twin} {
				wg.Go(func() {
					if _, err := svc.App.Payouts.RunAutoPayouts(ctx); err != nil {
						t.Errorf("pass: %v", err)
					}
				})
			}
			wg.Wait()
			ps := e.livePayouts(auto)
			if len(ps) != 1 {
				t.Fatalf("auto after two passes at once: %d payouts, want 1", len(ps))
			}
			amount, fee := int64(ps[0]["amount"].(float64)), int64(ps[0]["fee"].(float64))
			if amount+fee != got || fee != 50 || ps[0]["metadata"].(map[string]any)["auto_payout_day"] != day ||
				ps[0]["destination"].(map[string]any)["key"] != "v***@example.com" {
				t.Errorf("the payout of %d available: %v", got, ps[0])
			}
			if a := e.available(e.acct.LiveKey, auto); a != 0 {
				t.Errorf("auto has %d live left", a)
			}
			if a := e.available(e.acct.TestKey, auto); a != testFunds {
				t.Errorf("auto's test wallet went from %d to %d", testFunds, a)
			}
			for _, s := range []string{small, off} {
				if ps := e.livePayouts(s); len(ps) != 0 {
					t.Errorf("%s was paid out: %v", s, ps)
				}
			}
			if n, err := e.srv.App.DB.DueAutoPayouts(ctx, day, 10); err != nil || len(n) != 0 {
				t.Errorf("still due today: %v %v", n, err)
			}
			if ws, _ := e.srv.App.DB.Wallets(ctx, ports.Scope{AccountID: gone, Mode: domain.ModeLive}); len(ws) != 1 || ws[0].Available == 0 {
				t.Errorf("the disabled seller was paid out: %+v", ws)
			}

			// The same day again, its mark lost: the day's key replays.
			e.fundLive(auto, 5000)
			if err := e.srv.App.DB.MarkAutoPayout(ctx, auto, ""); err != nil {
				t.Fatal(err)
			}
			if n, err := twin.App.Payouts.RunAutoPayouts(ctx); err != nil || n != 1 {
				t.Fatalf("second pass of the day: %d %v", n, err)
			}
			if ps := e.livePayouts(auto); len(ps) != 1 {
				t.Fatalf("a second payout the same day: %v", ps)
			}

			// The next Brasília day pays what came in since.
			left := e.available(e.acct.LiveKey, auto)
			next := domain.EndOfBrasiliaDay(domain.BrasiliaDate(e.clock.Now()))
			e.clock.Advance(next.Sub(e.clock.Now()) + time.Minute)
			e.srv.RunWorkers(t)
			ps = e.livePayouts(auto)
			if len(ps) != 2 || int64(ps[0]["amount"].(float64)+ps[0]["fee"].(float64)) != left ||
				ps[0]["metadata"].(map[string]any)["auto_payout_day"] != domain.BrasiliaDate(e.clock.Now()).String() {
				t.Fatalf("the next day, %d available: %v", left, ps)
			}
			e.verifyLedger()
		})
	}
}
