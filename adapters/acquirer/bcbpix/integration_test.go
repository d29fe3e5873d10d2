package bcbpix_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// syncBuffer collects logs from every goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// world is quitad (QUITA_ACQUIRER=bcbpix) and pixsim over real HTTP: quitad
// calls the PSP over mTLS with a test CA, the PSP calls quitad back.
type world struct {
	sim       *pixsim.Server
	app       *wiring.App
	url       string
	acct      app.NewAccount
	logs      *syncBuffer
	pki       testPKI
	masterKey string
}

// backends are the databases each flow runs on.
var backends = []struct {
	name string
	dsn  func(t testing.TB) string
}{
	{"sqlite", testenv.SQLiteDSN},
	{"postgres", testenv.PostgresDSN},
}

func newWorld(t *testing.T, dsn string) *world {
	t.Helper()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	hs := httptest.NewUnstartedServer(nil)
	origin := "http://" + hs.Listener.Addr().String()
	mk := make([]byte, 32)
	_, _ = rand.Read(mk)
	cfg := wiring.Config{
		DatabaseURL: dsn, BaseURL: origin + "/v1", CheckoutURLBase: origin + "/checkout",
		PixFees:  domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}},
		Acquirer: wiring.AcquirerBCBPix, MasterKey: hex.EncodeToString(mk),
		BCBPix: bcbpix.Options{Retry: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond}},
	}
	a, cleanup, err := wiring.InitializeApp(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = a.Handler
	hs.Start()
	t.Cleanup(func() { hs.Close(); cleanup() })
	na, err := a.Accounts.CreateAccount(context.Background(), app.NewAccountInput{Name: "Loja PSP", Email: fmt.Sprintf("o%d@psp.example.com", time.Now().UnixNano()),
		Password: "quitatest-password", City: "SAO PAULO"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.BCBPix.Configure(context.Background(), na.AccountID, accountConfig(pki, psp.URL)); err != nil {
		t.Fatal(err)
	}
	hook := cfg.BaseURL + "/providers/bcbpix/" + na.AccountID
	if err := a.BCBPix.RegisterWebhook(context.Background(), na.AccountID, hook); err != nil {
		t.Fatal(err)
	}
	if got := sim.Webhook(testPixKey); got != hook {
		t.Fatalf("webhook at the PSP %q, want %q", got, hook)
	}
	return &world{sim: sim, app: a, url: origin, acct: na, logs: logs, pki: pki, masterKey: cfg.MasterKey}
}

type chargeJSON struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Amount int64  `json:"amount"`
	Pix    *struct {
		BRCode string `json:"br_code"`
		TxID   string `json:"txid"`
	} `json:"pix"`
	Settlement map[string]string `json:"settlement"`
	Error      *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (w *world) call(t *testing.T, key, method, path string, body any, idem string) (int, chargeJSON) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.url+"/v1"+path, rd)
	req.Header.Set("apikey", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c chargeJSON
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &c)
	return resp.StatusCode, c
}

var idemSeq sync.Mutex
var idemN int

func newIdem() string {
	idemSeq.Lock()
	defer idemSeq.Unlock()
	idemN++
	return fmt.Sprintf("bcbpix-%d-%d", time.Now().UnixNano(), idemN)
}

func (w *world) create(t *testing.T, body map[string]any) chargeJSON {
	t.Helper()
	code, c := w.call(t, w.acct.LiveKey, http.MethodPost, "/charges", body, newIdem())
	if code != http.StatusCreated || c.Pix == nil || c.Pix.TxID == "" {
		t.Fatalf("create: %d %+v", code, c)
	}
	return c
}

func (w *world) get(t *testing.T, id string) chargeJSON {
	t.Helper()
	code, c := w.call(t, w.acct.LiveKey, http.MethodGet, "/charges/"+id, nil, "")
	if code != http.StatusOK {
		t.Fatalf("get %s: %d", id, code)
	}
	return c
}

func (w *world) pay(t *testing.T, req pixsim.PayRequest) pixsim.Pix {
	t.Helper()
	p, err := w.sim.Pay(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) events(t *testing.T, id string, typ domain.EventType) int {
	t.Helper()
	evs, err := w.app.DB.ListChargeEvents(context.Background(), ports.Scope{AccountID: w.acct.AccountID, Mode: domain.ModeLive},
		strings.TrimPrefix(id, domain.PrefixCharge))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

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
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ps struct {
			Provider       string         `json:"provider"`
			ProviderStatus string         `json:"providerStatus"`
			RawResponse    map[string]any `json:"rawResponse"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&ps)
		resp.Body.Close()
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
			resp, err := http.DefaultClient.Do(req)
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
		resp, err := http.DefaultClient.Do(req)
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
			resp, err := http.DefaultClient.Do(req)
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

// Callbacks are dropped or duplicated by the PSP: these change the
// simulator's callback mode, so they get a world of their own.
func TestQuitadWithPixsimCallbackFaults(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testQuitadWithPixsimCallbackFaults(t, newWorld(t, b.dsn(t)))
		})
	}
}

func testQuitadWithPixsimCallbackFaults(t *testing.T, w *world) {
	ctx := context.Background()

	t.Run("dropped callback settles by reconciliation", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDrop)
		defer w.sim.SetCallbacks(pixsim.CallbacksNormal)
		c := w.create(t, map[string]any{"amount": 2500, "payment_method": "pix"})
		w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Fatalf("before reconciliation: %s", got.Status)
		}
		n, err := w.app.PixReceipts.Reconcile(ctx)
		if err != nil || n != 1 {
			t.Fatalf("reconcile applied %d, %v; want 1", n, err)
		}
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Fatalf("after reconciliation: %s", got.Status)
		}
		if n, err := w.app.PixReceipts.Reconcile(ctx); err != nil || n != 0 {
			t.Errorf("second reconciliation applied %d, %v; want 0", n, err)
		}
		if n := w.events(t, c.ID, domain.EventChargePaid); n != 1 {
			t.Errorf("%d charge.paid events, want 1", n)
		}
	})

	t.Run("duplicated callback settles once", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDuplicate)
		defer w.sim.SetCallbacks(pixsim.CallbacksNormal)
		c := w.create(t, map[string]any{"amount": 3300, "payment_method": "pix"})
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		delivered := 0
		for _, cb := range w.sim.Callbacks() {
			if len(cb.E2EIDs) == 1 && cb.E2EIDs[0] == p.EndToEndID {
				delivered++
				if cb.Status != http.StatusOK {
					t.Errorf("callback answered %d", cb.Status)
				}
			}
		}
		if delivered != 2 {
			t.Fatalf("%d callbacks delivered, want 2", delivered)
		}
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Fatalf("status %s", got.Status)
		}
		if n := w.events(t, c.ID, domain.EventChargePaid); n != 1 {
			t.Errorf("%d charge.paid events, want 1", n)
		}
	})

	t.Run("several pix in one callback", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDrop)
		c1 := w.create(t, map[string]any{"amount": 1100, "payment_method": "pix"})
		c2 := w.create(t, map[string]any{"amount": 2200, "payment_method": "pix"})
		p1 := w.pay(t, pixsim.PayRequest{TxID: c1.Pix.TxID})
		p2 := w.pay(t, pixsim.PayRequest{TxID: c2.Pix.TxID})
		w.sim.SetCallbacks(pixsim.CallbacksNormal)
		body := fmt.Sprintf(`{"pix":[{"endToEndId":%q},{"endToEndId":%q},{"endToEndId":%q},{"endToEndId":"E99999998202611220000forgedxxxx2"}]}`,
			p1.EndToEndID, p2.EndToEndID, p1.EndToEndID)
		resp, err := http.Post(w.url+"/v1/providers/bcbpix/"+w.acct.AccountID+"/pix", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var res struct{ Applied, Ignored int }
		_ = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || res.Applied != 2 || res.Ignored != 1 {
			t.Fatalf("callback: %d %+v, want 2 applied and the forged one ignored", resp.StatusCode, res)
		}
		for _, c := range []chargeJSON{c1, c2} {
			if got := w.get(t, c.ID); got.Status != "paid" {
				t.Errorf("%s: %s", c.ID, got.Status)
			}
		}
	})

	t.Run("PSP unreachable while confirming: 503 so the PSP retries", func(t *testing.T) {
		w.sim.SetCallbacks(pixsim.CallbacksDrop)
		c := w.create(t, map[string]any{"amount": 1300, "payment_method": "pix"})
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID})
		w.sim.SetCallbacks(pixsim.CallbacksNormal)
		post := func() int {
			resp, err := http.Post(w.url+"/v1/providers/bcbpix/"+w.acct.AccountID+"/pix", "application/json",
				strings.NewReader(fmt.Sprintf(`{"pix":[{"endToEndId":%q}]}`, p.EndToEndID)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		w.sim.SetDown(true)
		code := post()
		w.sim.SetDown(false)
		if code != http.StatusServiceUnavailable {
			t.Fatalf("callback while the PSP is down: %d, want 503", code)
		}
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Fatalf("status %s before the retry", got.Status)
		}
		if code := post(); code != http.StatusOK {
			t.Fatalf("retried callback: %d", code)
		}
		if got := w.get(t, c.ID); got.Status != "paid" {
			t.Fatalf("status %s after the retry", got.Status)
		}
	})

	t.Run("forged callback changes nothing", func(t *testing.T) {
		c := w.create(t, map[string]any{"amount": 4100, "payment_method": "pix"})
		body := fmt.Sprintf(`{"pix":[{"endToEndId":"E99999998202611220000forgedxxxx1","txid":%q,"valor":"41.00"}]}`, c.Pix.TxID)
		resp, err := http.Post(w.url+"/v1/providers/bcbpix/"+w.acct.AccountID+"/pix", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("forged callback answered %d", resp.StatusCode)
		}
		if got := w.get(t, c.ID); got.Status != "pending" {
			t.Fatalf("a forged callback settled the charge: %s", got.Status)
		}
		resp, err = http.Post(w.url+"/v1/providers/bcbpix/acct_unknown/pix", "application/json", strings.NewReader(`{"pix":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown account answered %d", resp.StatusCode)
		}
	})

	t.Run("callback for a devolução changes nothing more", func(t *testing.T) {
		c := w.create(t, locked(6000))
		p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: otherDoc, Disclose: true})
		if err := w.sim.NotifyReturns(ctx, p.EndToEndID); err != nil {
			t.Fatal(err)
		}
		if got := w.get(t, c.ID); got.Status != "refunded" {
			t.Fatalf("status %s", got.Status)
		}
		if rets := w.sim.Returns(p.EndToEndID); len(rets) != 1 || rets[0].Status != pixsim.ReturnDone {
			t.Errorf("devoluções %+v, want one DEVOLVIDO", rets)
		}
		if n := w.events(t, c.ID, domain.EventChargeRefunded); n > 1 {
			t.Errorf("%d charge.refunded events", n)
		}
	})

	t.Run("credentials never in logs", func(t *testing.T) {
		logs := w.logs.String()
		if !strings.Contains(logs, "pix payment applied") {
			t.Fatal("the test logged nothing: the check below would prove nothing")
		}
		for _, secret := range []string{testClientSecret, "PRIVATE KEY", w.masterKey, strings.TrimSpace(w.pki.ClientKeyPEM)[40:80]} {
			if strings.Contains(logs, secret) {
				t.Errorf("logs contain a secret (%.12s...)", secret)
			}
		}
	})
}
