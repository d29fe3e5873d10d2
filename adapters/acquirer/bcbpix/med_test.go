package bcbpix_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// medCharge is the part of a charge a MED return changes.
type medCharge struct {
	Status   string `json:"status"`
	Disputes []struct {
		Amount     int64  `json:"amount"`
		Reason     string `json:"reason"`
		EndToEndID string `json:"end_to_end_id"`
		ReturnID   string `json:"return_id"`
		ReturnedAt string `json:"returned_at"`
	} `json:"disputes"`
}

func (w *world) medCharge(t *testing.T, id string) medCharge {
	t.Helper()
	code, raw := w.do(t, w.acct.LiveKey, http.MethodGet, "/charges/"+id, nil, "")
	var c medCharge
	if code != http.StatusOK || json.Unmarshal(raw, &c) != nil {
		t.Fatalf("get %s: %d %s", id, code, raw)
	}
	return c
}

func (w *world) wallet(t *testing.T) domain.Balance {
	t.Helper()
	ws, err := w.app.DB.Wallets(context.Background(), ports.Scope{AccountID: w.acct.AccountID, Mode: domain.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ws {
		if x.Currency == "BRL" {
			return x.Balance
		}
	}
	return domain.Balance{Currency: "BRL"}
}

func (w *world) verify(t *testing.T) {
	t.Helper()
	problems, err := w.app.Payments.VerifyLedger(context.Background())
	if err != nil || len(problems) > 0 {
		t.Fatalf("ledger verify: %v\n%s", err, strings.Join(problems, "\n"))
	}
}

// A MED return — the payer's PSP taking money back from a Pix Quita
// credited — debits the merchant once, whether it arrives by callback, by
// a repeated callback or by reconciliation; the charge reads disputed and
// lists it; what the wallet cannot cover becomes the merchant's debt,
// which the next payment pays first.
func TestMEDReturnsDebitTheMerchant(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, b.dsn(t))
			ctx := context.Background()
			c := w.create(t, map[string]any{"amount": 10000, "payment_method": "pix"})
			p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
			if got := w.get(t, c.ID); got.Status != "paid" {
				t.Fatalf("after the Pix: %s", got.Status)
			}
			if bal := w.wallet(t); bal.Available != 9901 {
				t.Fatalf("credited %+v, want 9901 available", bal)
			}

			// By callback.
			d1, err := w.sim.MED(ctx, pixsim.MEDRequest{EndToEndID: p.EndToEndID, Amount: 4000, Natureza: "MED_FRAUDE"})
			if err != nil {
				t.Fatal(err)
			}
			mc := w.medCharge(t, c.ID)
			if mc.Status != "disputed" || len(mc.Disputes) != 1 || mc.Disputes[0].Amount != 4000 || mc.Disputes[0].Reason != "fraud" ||
				mc.Disputes[0].EndToEndID != p.EndToEndID || mc.Disputes[0].ReturnID != d1.ID || mc.Disputes[0].ReturnedAt == "" {
				t.Fatalf("after a MED return by callback: %+v", mc)
			}
			if bal := w.wallet(t); bal.Available != 5901 || bal.Owed != 0 {
				t.Fatalf("after a MED return of 4000: %+v, want 5901 available", bal)
			}
			if n := w.events(t, c.ID, domain.EventChargeDisputed); n != 1 {
				t.Errorf("%d charge.disputed events, want 1", n)
			}
			if n := w.events(t, c.ID, domain.EventPaymentStatusChanged); n < 1 {
				t.Errorf("no payment.status_changed for the dispute")
			}
			// The same news again, by callback and by reconciliation.
			if err := w.sim.NotifyReturns(ctx, p.EndToEndID); err != nil {
				t.Fatal(err)
			}
			if _, err := w.app.PixReceipts.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if bal := w.wallet(t); bal.Available != 5901 || len(w.medCharge(t, c.ID).Disputes) != 1 {
				t.Fatalf("a MED return seen again changed the wallet: %+v", bal)
			}
			w.verify(t)

			// By reconciliation alone (the callback lost): the rest of the
			// Pix, more than the wallet holds.
			w.sim.SetCallbacks(pixsim.CallbacksDrop)
			if _, err := w.sim.MED(ctx, pixsim.MEDRequest{EndToEndID: p.EndToEndID, Natureza: "MED_OPERACIONAL"}); err != nil {
				t.Fatal(err)
			}
			if got := w.medCharge(t, c.ID); len(got.Disputes) != 1 {
				t.Fatalf("a dropped callback was applied: %+v", got)
			}
			if _, err := w.app.PixReceipts.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			mc = w.medCharge(t, c.ID)
			if len(mc.Disputes) != 2 || mc.Disputes[1].Amount != 6000 || mc.Disputes[1].Reason != "operational" {
				t.Fatalf("after reconciliation: %+v", mc)
			}
			if bal := w.wallet(t); bal.Available != 0 || bal.Pending != 0 || bal.Owed != 99 {
				t.Fatalf("after 10000 taken back from a 9901 credit: %+v, want the merchant owing 99", bal)
			}
			w.verify(t)

			// The next payment pays the debt first.
			w.sim.SetCallbacks(pixsim.CallbacksNormal)
			c2 := w.create(t, map[string]any{"amount": 10000, "payment_method": "pix"})
			w.pay(t, pixsim.PayRequest{TxID: c2.Pix.TxID})
			if bal := w.wallet(t); bal.Available != 9802 || bal.Owed != 0 {
				t.Fatalf("after the next payment: %+v, want 9802 available and no debt", bal)
			}
			// Quita's own devoluções are no disputes: a refund (its id is
			// the refund's) and a payer-lock return (D + the end-to-end id).
			c3 := w.create(t, map[string]any{"amount": 3000, "payment_method": "pix"})
			p3 := w.pay(t, pixsim.PayRequest{TxID: c3.Pix.TxID})
			if code, raw := w.do(t, w.acct.LiveKey, http.MethodPost, "/payments/"+c3.ID+"/refund",
				map[string]any{"idempotencyKey": newIdem(), "amount": 1000}, ""); code != http.StatusCreated {
				t.Fatalf("refund: %d %s", code, raw)
			}
			for range 3 {
				if _, err := w.app.Payments.AdvanceRefunds(ctx); err != nil {
					t.Fatal(err)
				}
			}
			locked := w.create(t, map[string]any{"amount": 2000, "payment_method": "pix",
				"customer": map[string]any{"name": "Maria Silva"}, "expected_payer_tax_id": "52998224725"})
			w.pay(t, pixsim.PayRequest{TxID: locked.Pix.TxID, PayerTaxID: "11144477735", Disclose: true})
			w.runReturns(t, 3)
			if err := w.sim.NotifyReturns(ctx, p3.EndToEndID); err != nil {
				t.Fatal(err)
			}
			if _, err := w.app.PixReceipts.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if got := w.medCharge(t, c3.ID); got.Status != "paid" || len(got.Disputes) != 0 {
				t.Errorf("a refunded charge after its devolução was read back: %+v", got)
			}
			if got := w.medCharge(t, locked.ID); got.Status != "refunded" || len(got.Disputes) != 0 {
				t.Errorf("a payer-lock return after its devolução was read back: %+v", got)
			}
			// A refund of a disputed charge is refused.
			code, _ := w.do(t, w.acct.LiveKey, http.MethodPost, "/payments/"+c.ID+"/refund", map[string]any{"idempotencyKey": newIdem()}, "")
			if code != http.StatusConflict {
				t.Errorf("refund of a disputed payment: %d, want 409", code)
			}
			w.verify(t)
		})
	}
}
