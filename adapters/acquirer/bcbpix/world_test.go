package bcbpix_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
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
	"github.com/quitapix/quita/adapters/acquirer/modes"
	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// world is quitad (QUITA_ACQUIRER=bcbpix) and pixsim over real HTTPS with
// mutual TLS both ways and one test CA: quitad calls the PSP with its
// client certificate, the PSP calls quitad back with its own, and quitad
// requires it (PSPCallbackCAs).
type world struct {
	sim       *pixsim.Server
	app       *wiring.App
	url       string
	acct      app.NewAccount
	logs      *testkit.Buffer
	pki       testPKI
	masterKey string
	// http trusts quitad's certificate and presents none; psp presents
	// the PSP's callback certificate.
	http, psp *http.Client
}

// worldOptions are the simulator knobs a flow needs.
type worldOptions struct {
	sim pixsim.Config
	// callbackLimit, when set, replaces the per-account callback budget.
	callbackLimit ports.RateLimit
	// pixSend configures the account's PSP with Efí's Pix-send API
	// (payouts and cashout refunds).
	pixSend bool
	// clock, when set, is quitad's, the adapter's and pixsim's clock, so
	// a test moves all three through a subscription's months.
	clock *testkit.Clock
	// wrap, when set, stands between the PSP's listener and pixsim.
	wrap func(http.Handler) http.Handler
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
	return newWorldWith(t, dsn, worldOptions{})
}

func newWorldWith(t *testing.T, dsn string, o worldOptions) *world {
	t.Helper()
	pki := newPKI(t)
	if o.clock != nil {
		o.sim.Now = o.clock.Now
	}
	sim, psp := startPSPWrapped(t, pki, o.sim, o.wrap)
	logs := &testkit.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	hs := httptest.NewUnstartedServer(nil)
	quitaCert, err := pki.QuitaServer.TLS()
	if err != nil {
		t.Fatal(err)
	}
	hs.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{quitaCert}, ClientAuth: tls.RequestClientCert}
	origin := "https://" + hs.Listener.Addr().String()
	mk := make([]byte, 32)
	_, _ = rand.Read(mk)
	cfg := wiring.Config{
		DatabaseURL: dsn, BaseURL: origin + "/v1", CheckoutURLBase: origin + "/checkout",
		PixFees:  domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}},
		Acquirer: wiring.AcquirerBCBPix, MasterKey: hex.EncodeToString(mk),
		BCBPix:         bcbpix.Options{Retry: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond}},
		PSPCallbackCAs: pki.Pool, PSPCallbackLimit: o.callbackLimit,
		// Processing payouts are reconciled on every worker pass.
		PayoutRecheck: time.Millisecond,
		// A refused devolução is sent again on the next returns pass.
		ReturnRetryWait: time.Millisecond,
	}
	a, cleanup, err := initialize(cfg, log, o.clock)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = a.Handler
	hs.StartTLS()
	t.Cleanup(func() { hs.Close(); cleanup() })
	na, err := a.Accounts.CreateAccount(context.Background(), app.NewAccountInput{Name: "Loja PSP", Email: fmt.Sprintf("o%d@psp.example.com", time.Now().UnixNano()),
		Password: "quitatest-password", City: "SAO PAULO"})
	if err != nil {
		t.Fatal(err)
	}
	acfg := accountConfig(pki, psp.URL)
	acfg.Receiver = testReceiver // Pix Automático's cobrs name it
	if o.pixSend {
		acfg.PixSend = bcbpix.PixSendEfi
	}
	if err := a.BCBPix.Configure(context.Background(), na.AccountID, acfg); err != nil {
		t.Fatal(err)
	}
	hook := cfg.BaseURL + "/providers/bcbpix/" + na.AccountID
	if err := a.BCBPix.RegisterWebhook(context.Background(), na.AccountID, hook); err != nil {
		t.Fatal(err)
	}
	if got := sim.Webhook(testPixKey); !strings.HasPrefix(got, hook+"/") || len(got) < len(hook)+44 {
		t.Fatalf("webhook at the PSP %q, want %q + /<callback token>", got, hook)
	}
	trust := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pki.Pool}
	cb, err := pki.PSPCallback.TLS()
	if err != nil {
		t.Fatal(err)
	}
	pspTLS := trust.Clone()
	pspTLS.Certificates = []tls.Certificate{cb}
	return &world{sim: sim, app: a, url: origin, acct: na, logs: logs, pki: pki, masterKey: cfg.MasterKey,
		http: &http.Client{Transport: &http.Transport{TLSClientConfig: trust}, Timeout: 30 * time.Second},
		psp:  &http.Client{Transport: &http.Transport{TLSClientConfig: pspTLS}, Timeout: 30 * time.Second}}
}

// initialize wires quitad as quitad does, or with clock as the clock of
// quitad and of its API Pix adapter: live mode goes to the adapter the
// injector builds, test mode to a sandbox on the same clock.
func initialize(cfg wiring.Config, log *slog.Logger, clock *testkit.Clock) (*wiring.App, func(), error) {
	ctx := context.Background()
	if clock == nil {
		return wiring.InitializeApp(ctx, cfg, log)
	}
	cfg.BCBPix.Now = clock.Now
	sb := sandbox.New(sandbox.Config{LocationHost: sandbox.LocationHostFromURL(cfg.CheckoutURLBase), CheckoutBase: cfg.CheckoutURLBase}, clock)
	router := &modes.Router{Test: sb}
	a, cleanup, err := wiring.InitializeWith(ctx, cfg, log, clock, router, sb)
	if err == nil {
		router.Live = a.BCBPix
	}
	return a, cleanup, err
}

// hookURL is the callback URL the PSP was given (with the token).
func (w *world) hookURL() string { return w.sim.Webhook(testPixKey) + "/pix" }

// postCallback posts a callback body to url as the PSP would (with its
// client certificate) and returns the status and the decoded answer.
func (w *world) postCallback(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	return postWith(t, w.psp, url, body)
}

func postWith(t *testing.T, c *http.Client, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
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
	code, raw := w.do(t, key, method, path, body, idem)
	var c chargeJSON
	_ = json.Unmarshal(raw, &c)
	return code, c
}

// do sends method /v1+path with key, body (JSON) and an Idempotency-Key
// ("" sends none) and returns the status and the raw answer.
func (w *world) do(t *testing.T, key, method, path string, body any, idem string) (int, []byte) {
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
	resp, err := w.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
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

// runReturns runs the returns worker rounds times, each past the retry
// wait of a refused devolução.
func (w *world) runReturns(t *testing.T, rounds int) {
	t.Helper()
	for range rounds {
		time.Sleep(5 * time.Millisecond)
		if _, err := w.app.Charges.AdvanceReturns(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
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
