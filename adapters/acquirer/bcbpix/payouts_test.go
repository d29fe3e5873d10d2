package bcbpix_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
)

// TestQuitadWithPixsimPayouts: payouts and cashout refunds go out through
// Efí's Pix-send API, quitad ↔ pixsim over mutual TLS both ways: paid by
// the webhook, failed (hold released), paid by reconciliation after a lost
// notification, one Pix after a lost PUT answer, and a cashout refund.
func TestQuitadWithPixsimPayouts(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testPixsimPayouts(t, newWorldWith(t, b.dsn(t), worldOptions{pixSend: true}))
		})
	}
}

type payoutJSON struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Fee         int64  `json:"fee"`
	EndToEndID  string `json:"end_to_end_id"`
	FailureCode string `json:"failure_code"`
	Error       *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (w *world) payoutCall(t *testing.T, method, path string, body any, idem string) (int, payoutJSON, []byte) {
	t.Helper()
	code, raw := w.do(t, w.acct.LiveKey, method, path, body, idem)
	var p payoutJSON
	_ = json.Unmarshal(raw, &p)
	return code, p, raw
}

func (w *world) payout(t *testing.T, amount int64, key string) payoutJSON {
	t.Helper()
	code, p, raw := w.payoutCall(t, http.MethodPost, "/payouts", map[string]any{"amount": amount,
		"destination": map[string]any{"pix_key": key}, "description": "saque"}, newIdem())
	if code != http.StatusCreated || p.Status != "pending" {
		t.Fatalf("create payout: %d %s", code, raw)
	}
	return p
}

func (w *world) payoutStatus(t *testing.T, id string) payoutJSON {
	t.Helper()
	code, p, raw := w.payoutCall(t, http.MethodGet, "/payouts/"+id, nil, "")
	if code != http.StatusOK {
		t.Fatalf("get payout: %d %s", code, raw)
	}
	return p
}

// send runs the payout worker once and waits for the PSP's settlements and
// callbacks.
func (w *world) send(t *testing.T) {
	t.Helper()
	if _, err := w.app.Payouts.SendPayouts(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.sim.Idle()
}

func (w *world) available(t *testing.T) int64 {
	t.Helper()
	_, raw := w.do(t, w.acct.LiveKey, http.MethodGet, "/wallets/balance?currency=BRL", nil, "")
	var b struct {
		Available int64 `json:"available"`
	}
	_ = json.Unmarshal(raw, &b)
	return b.Available
}

func envioOf(t *testing.T, sim *pixsim.Server, value string) pixsim.Envio {
	t.Helper()
	var found []pixsim.Envio
	for _, e := range sim.Envios() {
		if e.Favorecido.Chave == value {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d Pix sent to %s, want 1: %+v", len(found), value, found)
	}
	return found[0]
}

func testPixsimPayouts(t *testing.T, w *world) {
	// Fund the live wallet: 200.00 paid by Pix (199.01 net).
	c := w.create(t, map[string]any{"amount": 20000, "payment_method": "pix"})
	w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
	avail := w.available(t)

	t.Run("paid by the PSP's notification", func(t *testing.T) {
		p := w.payout(t, 3000, "529.982.247-25")
		w.send(t)
		got := w.payoutStatus(t, p.ID)
		e := envioOf(t, w.sim, "52998224725")
		if got.Status != "paid" || got.EndToEndID != e.EndToEndID || e.Valor != "30.00" || e.Status != pixsim.SendDone ||
			e.Chave != testPixKey || e.InfoPagador != "saque" {
			t.Fatalf("payout %+v, Pix at the PSP %+v", got, e)
		}
		var sawEnvio bool
		for _, cb := range w.sim.Callbacks() {
			sawEnvio = sawEnvio || (cb.Cause == pixsim.CauseEnvio && cb.Status == http.StatusOK)
		}
		if !sawEnvio {
			t.Errorf("no Pix-send callback reached quitad: %+v", w.sim.Callbacks())
		}
		if a := w.available(t); a != avail-3000 {
			t.Errorf("available %d, want %d", a, avail-3000)
		}
		avail -= 3000
	})

	t.Run("failed at the PSP: hold released", func(t *testing.T) {
		w.sim.RejectKey("joana@example.com")
		p := w.payout(t, 2000, "Joana@Example.com")
		if a := w.available(t); a != avail-2000 {
			t.Fatalf("hold: available %d, want %d", a, avail-2000)
		}
		w.send(t)
		got := w.payoutStatus(t, p.ID)
		if got.Status != "failed" || got.FailureCode != "rejected_by_psp" {
			t.Fatalf("payout %+v", got)
		}
		if e := envioOf(t, w.sim, "joana@example.com"); e.Status != pixsim.SendFailed {
			t.Errorf("Pix at the PSP %+v", e)
		}
		if a := w.available(t); a != avail {
			t.Errorf("after the failure available %d, want %d", a, avail)
		}
	})

	t.Run("a lost notification: reconciliation settles it", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDrop)
		defer w.sim.SetCallbacks(pixsim.CallbacksNormal)
		p := w.payout(t, 1000, "+5511987654321")
		w.send(t)
		if got := w.payoutStatus(t, p.ID); got.Status != "processing" {
			t.Fatalf("without the notification: %+v", got)
		}
		time.Sleep(2 * time.Millisecond) // the recheck is due
		w.send(t)
		if got := w.payoutStatus(t, p.ID); got.Status != "paid" {
			t.Fatalf("after reconciliation: %+v", got)
		}
		avail -= 1000
	})

	t.Run("a lost PUT answer: the retry is the same Pix", func(t *testing.T) {
		before := len(w.sim.Envios())
		w.sim.LoseNextAnswers(1)
		p := w.payout(t, 500, "123e4567-e89b-42d3-a456-426614174000")
		w.send(t)
		if got := w.payoutStatus(t, p.ID); got.Status != "paid" {
			t.Fatalf("payout %+v", got)
		}
		if n := len(w.sim.Envios()) - before; n != 1 {
			t.Errorf("%d Pix sent, want 1", n)
		}
		envioOf(t, w.sim, "123e4567-e89b-42d3-a456-426614174000")
		avail -= 500
	})

	t.Run("cashout refund sends a Pix to the payer's key", func(t *testing.T) {
		rc := w.create(t, map[string]any{"amount": 4000, "payment_method": "pix"})
		w.pay(t, pixsim.PayRequest{TxID: rc.Pix.TxID, PayerTaxID: "11.444.777/0001-61", PayerName: "Empresa", Disclose: true})
		code, raw := w.do(t, w.acct.LiveKey, http.MethodPost, "/payments/"+rc.ID+"/refund", map[string]any{
			"idempotencyKey": newIdem(), "amount": 1500, "strategy": "cashout", "destinationKey": "11.444.777/0001-61"}, "")
		if code != http.StatusCreated {
			t.Fatalf("cashout refund: %d %s", code, raw)
		}
		for range 3 {
			if _, err := w.app.Payments.AdvanceRefunds(context.Background()); err != nil {
				t.Fatal(err)
			}
			w.sim.Idle()
			time.Sleep(2100 * time.Millisecond) // the refund lease
		}
		e := envioOf(t, w.sim, "11444777000161")
		if e.Valor != "15.00" || e.Status != pixsim.SendDone {
			t.Errorf("cashout Pix at the PSP %+v", e)
		}
		_, raw = w.do(t, w.acct.LiveKey, http.MethodGet, "/payments/"+rc.ID+"/refunds", nil, "")
		if !strings.Contains(string(raw), `"REFUNDED"`) {
			t.Errorf("refunds: %s", raw)
		}
		if rets := w.sim.Returns(rc.ID); len(rets) != 0 {
			t.Errorf("a cashout made a devolução: %+v", rets)
		}
	})

	t.Run("a refund without destinationKey goes to the payer's document", func(t *testing.T) {
		rc := w.create(t, map[string]any{"amount": 3000, "payment_method": "pix"})
		w.pay(t, pixsim.PayRequest{TxID: rc.Pix.TxID, PayerTaxID: "111.444.777-35", PayerName: "Fulano", Disclose: true})
		// A destination that is no Pix key is refused at once.
		code, raw := w.do(t, w.acct.LiveKey, http.MethodPost, "/payments/"+rc.ID+"/refund", map[string]any{
			"idempotencyKey": newIdem(), "amount": 1000, "destinationKey": "conta 1234"}, "")
		if code != http.StatusBadRequest || !strings.Contains(string(raw), `"destinationKey"`) {
			t.Fatalf("refund to a non-key: %d %s", code, raw)
		}
		code, raw = w.do(t, w.acct.LiveKey, http.MethodPost, "/payments/"+rc.ID+"/refund", map[string]any{
			"idempotencyKey": newIdem(), "amount": 1000}, "")
		if code != http.StatusCreated {
			t.Fatalf("refund: %d %s", code, raw)
		}
		for range 3 {
			if _, err := w.app.Payments.AdvanceRefunds(context.Background()); err != nil {
				t.Fatal(err)
			}
			w.sim.Idle()
			time.Sleep(2100 * time.Millisecond) // the refund lease
		}
		if e := envioOf(t, w.sim, "11144477735"); e.Valor != "10.00" || e.Status != pixsim.SendDone {
			t.Errorf("cashout Pix at the PSP %+v", e)
		}
		if _, raw = w.do(t, w.acct.LiveKey, http.MethodGet, "/payments/"+rc.ID+"/refunds", nil, ""); !strings.Contains(string(raw), `"REFUNDED"`) {
			t.Errorf("refunds: %s", raw)
		}
	})

	problems, err := w.app.Payments.VerifyLedger(context.Background())
	if err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v %v", problems, err)
	}
}
