package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/webhook"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// scriptedDNS is a DNS server inside the test: a Go resolver whose every
// query it answers with the A record it holds now, or refuses to reach
// (an outage) when it holds none. It counts the queries it is asked.
type scriptedDNS struct {
	mu      sync.Mutex
	a       netip.Addr // the zero Addr: the DNS is down
	queries atomic.Int64
}

func (d *scriptedDNS) set(a netip.Addr) {
	d.mu.Lock()
	d.a = a
	d.mu.Unlock()
}

func (d *scriptedDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		d.queries.Add(1)
		d.mu.Lock()
		a := d.a
		d.mu.Unlock()
		if !a.IsValid() {
			return nil, errors.New("scripted DNS: unreachable")
		}
		client, server := net.Pipe()
		go d.serve(server, a)
		return client, nil
	}}
}

// serve answers one query over a stream connection (2-byte length
// framing, as the Go resolver speaks over anything not a PacketConn): an
// A query gets a, any other type an empty NOERROR answer.
func (d *scriptedDNS) serve(c net.Conn, a netip.Addr) {
	defer c.Close()
	var n uint16
	if binary.Read(c, binary.BigEndian, &n) != nil {
		return
	}
	q := make([]byte, n)
	if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
		return
	}
	end := 12 // the question: labels up to the root, then type and class
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5
	if end > len(q) {
		return
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	// Header: the query's id, a recursive answer (QR RD RA), one question.
	resp := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:end]...)
	if qtype == 1 { // A: one answer, the name by pointer, TTL 60 s
		resp[7] = 1
		ip := a.As4()
		resp = append(append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4), ip[:]...)
	}
	_ = binary.Write(c, binary.BigEndian, uint16(len(resp)))
	_, _ = c.Write(resp)
}

// webhookURLEnv is a live caller's payments create over a charge store in
// memory, with the production URL guard resolving through scriptedDNS.
type webhookURLEnv struct {
	dns     *scriptedDNS
	store   *mocks.ChargeStoreMock
	psp     *mocks.AcquirerMock
	records *mocks.IdempotencyStoreMock
	links   domain.Links
	caller  app.Caller
}

func newWebhookURLEnv() *webhookURLEnv {
	var mu sync.Mutex
	recs := map[ports.IdempotencyKey]ports.IdempotencyRecord{}
	e := &webhookURLEnv{dns: &scriptedDNS{}, links: domain.Links{CheckoutBase: "https://pay.example.com/c"},
		caller: app.Caller{Account: domain.Account{ID: "acct1", MerchantName: "Loja", MerchantCity: "Sao Paulo", DefaultExpiry: time.Hour},
			Mode: domain.ModeLive}}
	e.store = &mocks.ChargeStoreMock{CreateChargeFunc: func(_ context.Context, _ *domain.Charge, _ []domain.Event, rec *ports.IdempotencyRecord) error {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := recs[rec.IdempotencyKey]; ok {
			return ports.ErrIdempotencyKeyExists
		}
		recs[rec.IdempotencyKey] = *rec
		return nil
	}}
	e.records = &mocks.IdempotencyStoreMock{GetIdempotencyRecordFunc: func(_ context.Context, k ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
		mu.Lock()
		defer mu.Unlock()
		if r, ok := recs[k]; ok {
			return &r, nil
		}
		return nil, ports.ErrNotFound
	}}
	// Live creates record their cob's intent; this rig keeps none.
	e.records.IdempotencyRecordOrIntentFunc = func(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
		return e.records.GetIdempotencyRecord(ctx, in.Key)
	}
	e.records.RecordProviderIntentFunc = func(context.Context, ports.ProviderIntent) error { return nil }
	e.records.DeleteProviderIntentFunc = func(context.Context, ports.IdempotencyKey) error { return nil }
	e.psp = &mocks.AcquirerMock{
		NameFunc: func() string { return "mock" },
		CreatePixChargeFunc: func(_ context.Context, r ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
			code, err := brcode.NewDynamic("pix.example.com/"+r.TxID, r.MerchantName, r.MerchantCity)
			if err != nil {
				return nil, err
			}
			return &ports.CreatePixChargeResponse{BRCode: code, TxID: r.TxID, Location: "pix.example.com/" + r.TxID, ExpiresAt: r.ExpiresAt, ProviderRef: r.TxID}, nil
		},
	}
	return e
}

// handler is one quitad process: its own idempotency cache (a new one is
// a flushed Redis) over the shared store.
func (e *webhookURLEnv) handler() http.Handler {
	clock := &mocks.ClockMock{NowFunc: time.Now}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	guard := &webhook.Guard{Policy: webhook.Policy{}, Resolver: e.dns.resolver()}
	charges := app.NewChargeService(e.store, exactlyonce.NewDatabaseChecked(e.records, idempotency.NewMemory(time.Now), clock, ids, log, exactlyonce.Config{}), e.psp, nil, clock, ids, log,
		app.ChargesConfig{Links: e.links, WebhookURLs: guard})
	payments := app.NewPaymentService(charges, nil, nil, e.psp, clock, ids, log, app.PaymentsConfig{Links: e.links})
	r := mux.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), ctxCaller, e.caller)))
		})
	})
	(&PaymentsController{payments: payments}).Routes(r)
	return r
}

func postPayment(h http.Handler, key, webhookURL string) *httptest.ResponseRecorder {
	body, _ := json.Marshal(map[string]any{"amount": 2500, "paymentMethods": []string{"PIX"}, "idempotencyKey": key, "webhookUrl": webhookURL})
	req := httptest.NewRequest(http.MethodPost, "/payments", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// A retry of a completed payments create answers the original 201 byte
// for byte even when its webhookUrl no longer passes the SSRF check (DNS
// down, or the host now resolving to a private address): replays resolve
// nothing, from the cache or from the database. A first create with that
// URL is still refused with 400 before any charge or cob exists.
func TestPaymentReplayDoesNotRecheckWebhookURL(t *testing.T) {
	t.Parallel()
	const hook = "https://hooks.merchant.example/tx"
	for _, tc := range []struct {
		name string
		now  netip.Addr // what the name resolves to after the first create
		code string     // the refusal of a first create then
	}{
		{"DNS down", netip.Addr{}, "parameter_invalid"},
		{"now private", netip.MustParseAddr("10.0.0.7"), "url_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newWebhookURLEnv()
			e.dns.set(netip.MustParseAddr("93.184.216.34"))
			h := e.handler()
			first := postPayment(h, "replay-dns-0001", hook)
			if first.Code != http.StatusCreated || e.dns.queries.Load() == 0 {
				t.Fatalf("first create: %d (DNS queries %d): %s", first.Code, e.dns.queries.Load(), first.Body)
			}
			e.dns.set(tc.now)
			asked := e.dns.queries.Load()

			for _, p := range []struct {
				name string
				h    http.Handler
			}{{"same process (cache)", h}, {"another process (database)", e.handler()}} {
				again := postPayment(p.h, "replay-dns-0001", hook)
				if again.Code != http.StatusCreated || again.Header().Get("Idempotent-Replayed") != "true" ||
					!bytes.Equal(again.Body.Bytes(), first.Body.Bytes()) {
					t.Fatalf("%s: replay %d replayed=%q:\n%s\nwant the original 201:\n%s", p.name, again.Code,
						again.Header().Get("Idempotent-Replayed"), again.Body, first.Body)
				}
			}
			if n := e.dns.queries.Load(); n != asked {
				t.Errorf("replays asked DNS %d times, want none", n-asked)
			}
			if n := len(e.store.CreateChargeCalls()); n != 1 {
				t.Fatalf("%d charges written, want 1", n)
			}

			refused := postPayment(h, "replay-dns-0002", hook)
			var env struct {
				Error struct{ Code, Param string } `json:"error"`
			}
			if refused.Code != http.StatusBadRequest || json.Unmarshal(refused.Body.Bytes(), &env) != nil ||
				env.Error.Code != tc.code || env.Error.Param != "webhookUrl" {
				t.Fatalf("first create with the URL now unsafe: %d %s, want 400 %s on webhookUrl", refused.Code, refused.Body, tc.code)
			}
			if c, p := len(e.store.CreateChargeCalls()), len(e.psp.CreatePixChargeCalls()); c != 1 || p != 1 {
				t.Errorf("the refused create wrote %d charges and asked %d cobs in all, want 1 and 1", c, p)
			}
		})
	}
}
