package quitatest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/client"
)

// Client is an SDK client on the test key of the server's default account
// ("Quita Test", created on first use); Account returns that account.
// Everything a merchant's code does through the SDK works on it, and its
// TestHelpers pay, expire and fail refunds as the sandbox bank would:
//
//	srv := quitatest.NewServer(t, quitatest.Options{})
//	qc := srv.Client()
//	ch, err := qc.Charges.Create(ctx, client.ChargeParams{Amount: 1990})
//	ch, err = qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{})
func (s *Server) Client(opts ...client.Option) *client.Client {
	return s.ClientFor(s.Account(), opts...)
}

// Account is the default account of Client.
func (s *Server) Account() Account {
	s.defaultOnce.Do(func() { s.defaultAcct, s.defaultErr = s.newAccount("Quita Test") })
	if s.defaultErr != nil {
		s.fail("create the default account: %v", s.defaultErr)
	}
	return s.defaultAcct
}

// ClientFor is an SDK client on acct's test key (with opts, e.g.
// client.WithMaxRetries). Use client.New(srv.BaseURL, acct.LiveKey) for
// live mode.
func (s *Server) ClientFor(acct Account, opts ...client.Option) *client.Client {
	return client.New(s.BaseURL, acct.TestKey, opts...)
}

// DashboardClient logs in as acct's dashboard user and returns a client
// (with opts) whose APIKeys work.
func (s *Server) DashboardClient(t testing.TB, acct Account, opts ...client.Option) *client.Client {
	t.Helper()
	email, ok := s.emails.Load(acct.AccountID)
	if !ok {
		t.Fatalf("quitatest: %s was not created by this server", acct.AccountID)
	}
	c := client.New(s.BaseURL, "", opts...)
	sess, err := c.Auth.Login(context.Background(), email.(string), Password)
	if err != nil {
		t.Fatalf("quitatest: log in: %v", err)
	}
	return c.With(client.WithToken(sess.Token))
}

func (s *Server) fail(format string, args ...any) {
	if s.tb != nil {
		s.tb.Helper()
		s.tb.Fatalf("quitatest: "+format, args...)
	}
	panic(fmt.Sprintf("quitatest: "+format, args...))
}

// Advance moves the server's clock forward by d and runs the work that
// became due (RunWorkers): charges past their expiry and the expiry grace
// (Options.ExpiryGrace) expire, due-date charges past their due date get
// charge.overdue, held funds are released, and the webhooks
// that causes are delivered. It needs the default clock (or a *Clock in
// Options.Clock).
func (s *Server) Advance(t testing.TB, d time.Duration) {
	t.Helper()
	c, ok := s.Clock.(*Clock)
	if !ok {
		t.Fatalf("quitatest: Advance needs a *quitatest.Clock, the server has %T", s.Clock)
	}
	c.Advance(d)
	s.RunWorkers(t)
}

// RunWorkers waits for the work requests left running in the background
// (a payment's method data), then runs once, in order, every job a
// deployed server runs on a timer — expiry, overdue notices, payer returns, refunds
// (PENDING → IN_PROGRESS → REFUNDED), balance releases, method data,
// sub-accounts' automatic payouts of the day, payouts (pending → sent to
// the sandbox PSP), charge batches (what
// their create's background run left), subscriptions (mandates past their
// deadline, cycles whose window opened get their charges) — then
// FlushWebhooks. Call it from the test, not while requests are in flight. A test
// server runs none of them by itself, so a test decides when time passes.
func (s *Server) RunWorkers(t testing.TB) {
	t.Helper()
	// What requests started in the background (a payment's method data)
	// finishes first, as it would within a second on a deployed server.
	s.App.Charges.WaitBackground()
	ctx := context.Background()
	jobs := []struct {
		name string
		tick func(context.Context) (int, error)
	}{
		{"expiry", s.App.Charges.ExpireDue},
		{"overdue", s.App.Charges.NotifyOverdue},
		{"returns", s.App.Charges.AdvanceReturns},
		{"refunds", s.App.Payments.AdvanceRefunds},
		{"releases", s.App.Payments.ReleaseDue},
		{"methods", s.App.Payments.FinalizePendingMethods},
		{"auto payouts", s.App.Payouts.RunAutoPayouts},
		{"payouts", s.App.Payouts.SendPayouts},
		{"charge batches", s.App.Charges.ProcessChargeBatches},
		{"subscriptions", s.App.Subscriptions.RunSubscriptions},
	}
	for _, j := range jobs {
		if err := drain(ctx, j.tick); err != nil {
			t.Fatalf("quitatest: %s worker: %v", j.name, err)
		}
	}
	s.FlushWebhooks(t)
}

// FlushWebhooks turns every pending event into deliveries and attempts
// every delivery that is due, returning when none is left (a failed
// attempt waits for its retry time: Advance past it to retry).
func (s *Server) FlushWebhooks(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	if err := drain(ctx, s.App.Webhooks.DispatchOnce); err != nil {
		t.Fatalf("quitatest: webhook dispatch: %v", err)
	}
	if err := drain(ctx, s.App.Webhooks.DeliverOnce); err != nil {
		t.Fatalf("quitatest: webhook delivery: %v", err)
	}
}

// drain ticks until a tick handles nothing (bounded, so a job that keeps
// finding work cannot hang a test).
func drain(ctx context.Context, tick func(context.Context) (int, error)) error {
	for range 1000 {
		n, err := tick(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
	return nil
}

// Receiver is a webhook endpoint inside the test: an HTTP server
// registered on an account, which hands each delivery to your handler
// (Handle) and records it.
type Receiver struct {
	// Endpoint is the registered endpoint; Endpoint.Secret signs the
	// deliveries.
	Endpoint *client.WebhookEndpoint
	srv      *Server

	mu      sync.Mutex
	handler http.Handler
	got     []Delivery
}

// Delivery is one request the Receiver received.
type Delivery struct {
	// Event is the body decoded (client.ParseEvent); VerifyErr is what
	// client.VerifySignature said of it with the endpoint's secret.
	Event     *client.Event
	VerifyErr error
	Header    http.Header
	Body      []byte
	// Status is what the handler answered.
	Status int
}

// NewReceiver registers a receiver for events (all canonical charge.*
// events when none are named) on qc's account (nil: the default
// account's Client).
func (s *Server) NewReceiver(t testing.TB, qc *client.Client, events ...string) *Receiver {
	t.Helper()
	if qc == nil {
		qc = s.Client()
	}
	if len(events) == 0 {
		events = []string{client.EventChargeCreated, client.EventChargePaid, client.EventChargeFailed,
			client.EventChargeExpired, client.EventChargeRefunded, client.EventChargeDisputed}
	}
	r := &Receiver{srv: s}
	hs := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(hs.Close)
	ep, err := qc.Webhooks.CreateEndpoint(context.Background(), client.EndpointParams{URL: hs.URL + "/hooks", Events: events})
	if err != nil {
		t.Fatalf("quitatest: register receiver: %v", err)
	}
	r.Endpoint = ep
	return r
}

// Handle sends every delivery to h from now on — your application's
// webhook handler. Without one the receiver answers 200.
func (r *Receiver) Handle(h http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handler = h
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	h := r.handler
	r.mu.Unlock()
	d := Delivery{Header: req.Header.Clone(), Body: body, Status: http.StatusOK}
	d.Event, _ = client.ParseEvent(body)
	d.VerifyErr = client.WebhookVerifier{Secrets: []string{r.Endpoint.Secret}, Now: r.srv.Clock.Now}.Verify(req.Header.Get(client.SignatureHeader), body)
	if h != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		d.Status = rec.Code
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}
	r.mu.Lock()
	r.got = append(r.got, d)
	r.mu.Unlock()
}

// Deliveries returns what was received so far, oldest first.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// Wait flushes the server's webhooks until a delivery of eventType has
// arrived for the charge, payment or payout id (any, when id is empty)
// and returns it; after 10 s it fails the test.
func (r *Receiver) Wait(t testing.TB, eventType, id string) Delivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.srv.FlushWebhooks(t)
		for _, d := range r.Deliveries() {
			if d.Event != nil && d.Event.Type == eventType && (id == "" || eventFor(d.Event, id)) {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("quitatest: no %s webhook for %q within 10 s (%d received)", eventType, id, len(r.Deliveries()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventFor reports whether ev is about the charge or payment id (ch_,
// tx_ or raw).
func eventFor(ev *client.Event, id string) bool {
	raw := rawID(id)
	if ev.Legacy != nil {
		return rawID(ev.Legacy.TransactionID) == raw
	}
	if ch, err := ev.Charge(); err == nil {
		return rawID(ch.ID) == raw
	}
	p, err := ev.Payout()
	return err == nil && rawID(p.ID) == raw
}

func rawID(id string) string {
	for _, p := range []string{"ch_", "tx_", "po_"} {
		if rest, ok := strings.CutPrefix(id, p); ok {
			return rest
		}
	}
	return id
}
