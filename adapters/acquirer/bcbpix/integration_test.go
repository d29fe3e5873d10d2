package bcbpix_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

const (
	expectedDoc = "52998224725"
	otherDoc    = "11144477735"
)

func locked(amount int64) map[string]any {
	return map[string]any{"amount": amount, "payment_method": "pix",
		"customer":              map[string]any{"name": "Joao Souza", "document": expectedDoc},
		"expected_payer_tax_id": expectedDoc}
}

func TestQuitadWithPixsim(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testQuitadWithPixsim(t, newWorld(t, b.dsn(t)))
		})
	}
}

func testQuitadWithPixsim(t *testing.T, w *world) {

	t.Run("create, pay, paid", func(t *testing.T) {
		c := w.create(t, map[string]any{"amount": 12345, "payment_method": "pix", "description": "pedido 42"})
		cob, ok := w.sim.CobByTxID(c.Pix.TxID)
		if !ok || cob.Valor.Original != "123.45" || cob.PixCopiaECola != c.Pix.BRCode || cob.SolicitacaoPagador != "pedido 42" {
			t.Fatalf("cob at the PSP %+v (found %v); charge %+v", cob, ok, c.Pix)
		}
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: otherDoc})
		got := w.get(t, c.ID)
		if got.Status != "paid" || got.Settlement["end_to_end_id"] != p.EndToEndID {
			t.Fatalf("after the callback: %s %v", got.Status, got.Settlement)
		}
		// provider-status reads the live cob at the PSP.
		req, _ := http.NewRequest(http.MethodGet, w.url+"/v1/payments/"+c.ID+"/provider-status", nil)
		req.Header.Set("apikey", w.acct.LiveKey)
		resp, err := w.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ps struct {
			Provider       string         `json:"provider"`
			ProviderStatus string         `json:"providerStatus"`
			RawResponse    map[string]any `json:"rawResponse"`
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_ = json.Unmarshal(body, &ps)
		if strings.Contains(string(body), otherDoc) || strings.Contains(string(body), "pagador") {
			t.Errorf("provider-status shows the payer: %s", body)
		}
		if pix, _ := ps.RawResponse["pix"].([]any); len(pix) != 1 || pix[0].(map[string]any)["endToEndId"] != p.EndToEndID {
			t.Errorf("provider-status pix: %v", ps.RawResponse["pix"])
		}
		if resp.StatusCode != http.StatusOK || ps.Provider != "bcbpix" || ps.ProviderStatus != pixsim.CobConcluded ||
			ps.RawResponse["txid"] != c.Pix.TxID {
			t.Errorf("provider-status: %d %+v", resp.StatusCode, ps)
		}
	})

	t.Run("payer lock confirmed by GET /pix?cpf", func(t *testing.T) {
		c := w.create(t, locked(5000))
		w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: expectedDoc})
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Fatalf("status %s, want paid", got.Status)
		}
	})

	t.Run("lock mismatch disclosed: devolução and refunded", func(t *testing.T) {
		c := w.create(t, locked(5000))
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: otherDoc, Disclose: true})
		if got := w.get(t, c.ID); got.Status != "refunded" {
			t.Fatalf("status %s, want refunded", got.Status)
		}
		rets := w.sim.Returns(p.EndToEndID)
		if len(rets) != 1 || rets[0].Valor != "50.00" || rets[0].Natureza != "ORIGINAL" {
			t.Fatalf("devoluções %+v, want one ORIGINAL of 50.00", rets)
		}
	})

	t.Run("a devolução the payer's bank refuses: processing, retried under a new id, then refunded", func(t *testing.T) {
		c := w.create(t, locked(5000))
		w.sim.FailNextReturn()
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: otherDoc, Disclose: true})
		if got := w.get(t, c.ID); got.Status != "processing" {
			t.Fatalf("status %s after the refusal, want processing", got.Status)
		}
		if n := w.events(t, c.ID, domain.EventChargeRefunded); n != 0 {
			t.Fatalf("%d charge.refunded for a devolução the payer's bank refused", n)
		}
		w.runReturns(t, 1)
		rets := w.sim.Returns(p.EndToEndID)
		if len(rets) != 2 || rets[0].Status != pixsim.ReturnFailed || rets[1].Status != pixsim.ReturnDone ||
			rets[0].ID != domain.ReturnAttemptID(p.EndToEndID, 1) || rets[1].ID != domain.ReturnAttemptID(p.EndToEndID, 2) {
			t.Fatalf("devoluções %+v, want the refused one and a second under a new id, returned", rets)
		}
		if got := w.get(t, c.ID); got.Status != "refunded" {
			t.Fatalf("status %s after the retry, want refunded", got.Status)
		}
		if n := w.events(t, c.ID, domain.EventChargeRefunded); n != 1 {
			t.Errorf("%d charge.refunded events, want 1", n)
		}
		// The PSP's callbacks for both devoluções, and reconciliation, change
		// nothing and send nothing more.
		if err := w.sim.NotifyReturns(context.Background(), p.EndToEndID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.app.PixReceipts.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		w.runReturns(t, 1)
		if n := len(w.sim.Returns(p.EndToEndID)); n != 2 {
			t.Errorf("%d devoluções after callbacks and reconciliation, want 2", n)
		}
	})

	t.Run("a devolução refused on every attempt: left for an operator, never refunded", func(t *testing.T) {
		c := w.create(t, map[string]any{"amount": 5000, "payment_method": "pix"})
		w.sim.FailNextReturns(100)
		defer w.sim.FailNextReturns(0)
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, Amount: 1000}) // a wrong amount
		w.runReturns(t, app.DefaultReturnAttempts+1)
		rets := w.sim.Returns(p.EndToEndID)
		if len(rets) != app.DefaultReturnAttempts {
			t.Fatalf("%d devoluções, want %d", len(rets), app.DefaultReturnAttempts)
		}
		for i, r := range rets {
			if r.Status != pixsim.ReturnFailed || r.ID != domain.ReturnAttemptID(p.EndToEndID, i+1) {
				t.Errorf("devolução %d: %s %s", i+1, r.ID, r.Status)
			}
		}
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Errorf("status %s, want pending (the wrong amount never settled it)", got.Status)
		}
		failed, err := w.app.Charges.PixReturns(context.Background(), domain.PixReturnFailed, 100)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range failed {
			found = found || (r.EndToEndID == p.EndToEndID && r.Attempt == app.DefaultReturnAttempts && r.Failure != "")
		}
		if !found {
			t.Errorf("the return is not listed FAILED for an operator: %+v", failed)
		}
		var surfaced string
		for _, line := range strings.Split(w.logs.String(), "\n") {
			if strings.Contains(line, p.EndToEndID) && strings.Contains(line, `"level":"ERROR"`) {
				surfaced = line
			}
		}
		if surfaced == "" || strings.Contains(surfaced, otherDoc) {
			t.Errorf("error log for the operator: %q", surfaced)
		}
		// Reconciliation sees the Pix, with nothing returned, and sends nothing.
		if _, err := w.app.PixReceipts.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		w.runReturns(t, 1)
		if n := len(w.sim.Returns(p.EndToEndID)); n != app.DefaultReturnAttempts {
			t.Errorf("%d devoluções after reconciliation, want %d", n, app.DefaultReturnAttempts)
		}
	})

	t.Run("lock undisclosed and not from the expected payer: processing", func(t *testing.T) {
		c := w.create(t, locked(5000))
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: otherDoc})
		if got := w.get(t, c.ID); got.Status != "processing" {
			t.Fatalf("status %s, want processing", got.Status)
		}
		if rets := w.sim.Returns(p.EndToEndID); len(rets) != 0 {
			t.Errorf("a held payment was returned: %+v", rets)
		}
	})

	t.Run("underpaid: pending and devolução", func(t *testing.T) {
		c := w.create(t, map[string]any{"amount": 5000, "payment_method": "pix"})
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, Amount: 1000})
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Fatalf("status %s, want pending", got.Status)
		}
		rets := w.sim.Returns(p.EndToEndID)
		if len(rets) != 1 || rets[0].Valor != "10.00" {
			t.Fatalf("devoluções %+v, want one of 10.00", rets)
		}
		// Reconciliation sees the Pix again and returns nothing more.
		if _, err := w.app.PixReceipts.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rets := w.sim.Returns(p.EndToEndID); len(rets) != 1 {
			t.Errorf("devoluções after reconciliation: %+v", rets)
		}
	})

	t.Run("PSP down: 503, then success on retry", func(t *testing.T) {
		key := newIdem()
		body := map[string]any{"amount": 700, "payment_method": "pix"}
		w.sim.SetDown(true)
		code, c := w.call(t, w.acct.LiveKey, http.MethodPost, "/charges", body, key)
		w.sim.SetDown(false)
		if code != http.StatusServiceUnavailable || c.Error == nil || c.Error.Code != "acquirer_unavailable" {
			t.Fatalf("while down: %d %+v", code, c.Error)
		}
		code, c = w.call(t, w.acct.LiveKey, http.MethodPost, "/charges", body, key)
		if code != http.StatusCreated || c.Pix == nil {
			t.Fatalf("retry: %d %+v", code, c)
		}
		if _, ok := w.sim.CobByTxID(c.Pix.TxID); !ok {
			t.Error("the retried charge has no cob at the PSP")
		}
	})

	t.Run("a lost PUT /cob answer: the retry PUTs the cob again, the expiry holds", func(t *testing.T) {
		w.sim.LoseNextAnswers(1)
		c := w.create(t, map[string]any{"amount": 900, "payment_method": "pix", "expires_in": 1800})
		// The PSP revises an ATIVA cob on a second PUT (revisao moves only
		// if something changed: here at most expiracao, by a second).
		cob, ok := w.sim.CobByTxID(c.Pix.TxID)
		if !ok || cob.PixCopiaECola != c.Pix.BRCode {
			t.Fatalf("cob %+v, want the charge's BR Code", cob)
		}
		created, _ := time.Parse(time.RFC3339Nano, cob.Calendario.Criacao)
		end := created.Add(time.Duration(cob.Calendario.Expiracao) * time.Second)
		if d := time.Until(end); d < 1790*time.Second || d > 1801*time.Second {
			t.Errorf("the revised cob ends in %s, want about the charge's 30 min", d)
		}
		w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Errorf("status %s, want paid", got.Status)
		}
	})

	t.Run("partial devoluções up to the amount; no cashout", func(t *testing.T) {
		c := w.create(t, map[string]any{"amount": 10000, "payment_method": "pix"})
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		extra := w.create(t, map[string]any{"amount": 2000, "payment_method": "pix"}) // balance for the fees
		w.pay(t, pixsim.PayRequest{TxID: extra.Pix.TxID})
		refund := func(body map[string]any) (int, string) {
			body["idempotencyKey"] = newIdem()
			b, _ := json.Marshal(body)
			req, _ := http.NewRequest(http.MethodPost, w.url+"/v1/payments/"+c.ID+"/refund", bytes.NewReader(b))
			req.Header.Set("apikey", w.acct.LiveKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := w.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(raw)
		}
		steps := []struct {
			body     map[string]any
			wantCode int
			wantIn   string
		}{
			{map[string]any{"amount": 4000}, http.StatusCreated, "PENDING"}, // no strategy: devolution on this provider
			{map[string]any{"amount": 1000, "strategy": "cashout"}, http.StatusUnprocessableEntity, "cashout_not_supported"},
			{map[string]any{"amount": 6000, "strategy": "devolution"}, http.StatusCreated, "PENDING"},
			{map[string]any{"amount": 1, "strategy": "devolution"}, http.StatusBadRequest, "refund_exceeds_amount"},
		}
		for i, s := range steps {
			code, raw := refund(s.body)
			if code != s.wantCode || !strings.Contains(raw, s.wantIn) {
				t.Fatalf("step %d: %d %s; want %d with %s", i, code, raw, s.wantCode, s.wantIn)
			}
		}
		for range 2 { // PENDING → IN_PROGRESS (PUT devolução) → REFUNDED (GET devolução)
			if _, err := w.app.Payments.AdvanceRefunds(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		rets := w.sim.Returns(p.EndToEndID)
		var total int64
		for _, r := range rets {
			v, _ := domain.ParseDecimal(r.Valor)
			total += v
			if r.Status != pixsim.ReturnDone || r.Natureza != "ORIGINAL" {
				t.Errorf("devolução %+v", r)
			}
		}
		if len(rets) != 2 || total != 10000 {
			t.Fatalf("devoluções %+v, want two summing 100.00", rets)
		}
		req, _ := http.NewRequest(http.MethodGet, w.url+"/v1/payments/"+c.ID+"/refunds", nil)
		req.Header.Set("apikey", w.acct.LiveKey)
		resp, err := w.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if n := strings.Count(string(raw), `"REFUNDED"`); n != 2 {
			t.Errorf("refunds list %s: %d REFUNDED, want 2", raw, n)
		}
	})

	t.Run("cancel removes the cob; a Pix for a closed charge is returned", func(t *testing.T) {
		post := func(path string) int {
			req, _ := http.NewRequest(http.MethodPost, w.url+"/v1"+path, nil)
			req.Header.Set("apikey", w.acct.LiveKey)
			resp, err := w.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		c := w.create(t, map[string]any{"amount": 1500, "payment_method": "pix"})
		if code := post("/payments/" + c.ID + "/cancel"); code != http.StatusOK {
			t.Fatalf("cancel: %d", code)
		}
		if cob, _ := w.sim.CobByTxID(c.Pix.TxID); cob.Status != pixsim.CobRemoved {
			t.Errorf("cob after cancel: %s", cob.Status)
		}
		// The PSP is down while the merchant cancels: the cob stays payable.
		late := w.create(t, map[string]any{"amount": 1500, "payment_method": "pix"})
		w.sim.SetDown(true)
		code := post("/payments/" + late.ID + "/cancel")
		w.sim.SetDown(false)
		if code != http.StatusOK {
			t.Fatalf("cancel while the PSP is down: %d", code)
		}
		p := w.pay(t, pixsim.PayRequest{TxID: late.Pix.TxID})
		if got := w.get(t, late.ID); got.Status == "paid" {
			t.Fatalf("a cancelled charge was paid")
		}
		rets := w.sim.Returns(p.EndToEndID)
		if len(rets) != 1 || rets[0].Valor != "15.00" {
			t.Fatalf("devoluções %+v, want the whole 15.00 returned", rets)
		}
	})

	t.Run("test mode stays on the sandbox", func(t *testing.T) {
		code, c := w.call(t, w.acct.TestKey, http.MethodPost, "/charges", map[string]any{"amount": 100, "payment_method": "pix"}, newIdem())
		if code != http.StatusCreated || c.Pix == nil {
			t.Fatalf("test-mode create: %d %+v", code, c)
		}
		if _, ok := w.sim.CobByTxID(c.Pix.TxID); ok {
			t.Error("a test-mode charge reached the PSP")
		}
	})
}
