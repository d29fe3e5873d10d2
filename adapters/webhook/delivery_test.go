package webhook_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/adapters/webhook"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// receiver is a merchant's webhook endpoint: it verifies every signature
// with the secrets it currently trusts, counts deliveries, and answers
// what the test scripts.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	clock  ports.Clock
	mu     sync.Mutex
	secret []string
	// answer picks the status for the n-th request (1-based).
	answer func(n int, r *http.Request) int
	block  chan struct{} // when set, requests wait on it (or their ctx)
	got    []delivery
	// inFlight and maxInFlight per delivery (the part of the delivery id
	// before the attempt number).
	inFlight    map[string]int
	maxInFlight int
	bad         atomic.Int64
	arrived     chan struct{}
}

type delivery struct {
	deliveryID, eventType, signature string
	body                             []byte
}

func newReceiver(t *testing.T, clock ports.Clock, secrets ...string) *receiver {
	rc := &receiver{t: t, clock: clock, secret: secrets, inFlight: map[string]int{}, arrived: make(chan struct{}, 1024),
		answer: func(int, *http.Request) int { return http.StatusOK }}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) setSecrets(s ...string) {
	rc.mu.Lock()
	rc.secret = s
	rc.mu.Unlock()
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	d := delivery{r.Header.Get(domain.DeliveryIDHeader), r.Header.Get(domain.EventTypeHeader), r.Header.Get(domain.SignatureHeader), body}
	base, _, _ := strings.Cut(d.deliveryID, "-")
	rc.mu.Lock()
	secrets := rc.secret
	rc.got = append(rc.got, d)
	n := len(rc.got)
	rc.inFlight[base]++
	rc.maxInFlight = max(rc.maxInFlight, rc.inFlight[base])
	block := rc.block
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.inFlight[base]--
		rc.mu.Unlock()
	}()
	if err := domain.VerifyWebhook(d.signature, body, rc.clock.Now(), secrets...); err != nil {
		rc.bad.Add(1)
		rc.t.Errorf("receiver: delivery %s (%s) does not verify: %v", d.deliveryID, d.eventType, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.arrived <- struct{}{}
	if block != nil {
		select {
		case <-block:
		case <-r.Context().Done():
			return
		}
	}
	w.WriteHeader(rc.answer(n, r))
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// engine is a webhook service over a real store and the real sender.
type engine struct {
	db    *store.DB
	svc   *app.WebhookService
	clock ports.Clock
	scope ports.Scope
	acct  domain.Account
}

var testSchedule = []time.Duration{time.Millisecond}

func newEngine(t *testing.T, dsn string, clock ports.Clock, cfg app.WebhooksConfig) *engine {
	t.Helper()
	db := openDB(t, dsn)
	e := &engine{db: db, clock: clock}
	e.svc = newService(db, clock, cfg)
	e.acct, e.scope = newAccount(t, db, clock.Now())
	return e
}

// newAccount creates an account (with a transaction-webhook secret) and
// returns its test-mode scope.
func newAccount(t testing.TB, db *store.DB, now time.Time) (domain.Account, ports.Scope) {
	t.Helper()
	raw, _ := domain.NewRawID(rand.Reader)
	secret, _ := domain.NewWebhookSecret(rand.Reader)
	acct := domain.Account{ID: "acct_" + raw, Name: "Loja", MerchantName: "Loja", MerchantCity: "SAO PAULO",
		TransactionWebhookSecret: secret, CreatedAt: now}
	u := ports.User{ID: "usr_" + raw, AccountID: acct.ID, Email: raw + "@example.com", PasswordHash: "x", CreatedAt: now}
	if err := db.CreateAccount(context.Background(), acct, u, nil); err != nil {
		t.Fatal(err)
	}
	return acct, ports.Scope{AccountID: acct.ID, Mode: domain.ModeTest}
}

func openDB(t testing.TB, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

func newService(db *store.DB, clock ports.Clock, cfg app.WebhooksConfig) *app.WebhookService {
	if cfg.RetrySchedule == nil {
		cfg.RetrySchedule = testSchedule
	}
	p := webhook.Policy{AllowPrivate: true}
	return app.NewWebhookService(db, db, webhook.NewSender(p), webhook.NewGuard(p), clock, app.RandomIDs{},
		slog.New(slog.DiscardHandler), cfg)
}

// payments is the payments surface over the engine's store, for the
// resend path (no acquirer: a resend never calls one).
func (e *engine) payments() *app.PaymentService {
	log := slog.New(slog.DiscardHandler)
	links := domain.Links{CheckoutBase: "https://pay.example.com/c"}
	charges := app.NewChargeService(e.db, e.db, nil, nil, nil, e.clock, app.RandomIDs{}, log, app.ChargesConfig{Links: links})
	return app.NewPaymentService(charges, e.db, e.db, nil, e.clock, app.RandomIDs{}, log, app.PaymentsConfig{Links: links})
}

func (e *engine) caller() app.Caller { return app.Caller{Account: e.acct, Mode: e.scope.Mode} }

func (e *engine) endpoint(t *testing.T, url string, events ...string) domain.WebhookEndpoint {
	t.Helper()
	ep, err := e.svc.CreateEndpoint(context.Background(), e.caller(), app.EndpointInput{URL: url, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// charge writes a new charge and its creation events to the outbox, as
// the charge service does.
func (e *engine) charge(t testing.TB, webhookURL string) *domain.Charge {
	t.Helper()
	raw, _ := domain.NewRawID(rand.Reader)
	c, err := domain.NewCharge(domain.NewChargeParams{ID: raw, AccountID: e.scope.AccountID, Mode: e.scope.Mode, Amount: 1990,
		Currency: "BRL", Methods: []domain.Method{domain.MethodPix}, WebhookURL: webhookURL, Now: e.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := domain.NewChargeEvents(c, "", domain.CreationEvents(), domain.Links{}, app.RandomIDs{}.NewID, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateCharge(context.Background(), c, evs, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// drain dispatches and delivers until nothing is left to do now.
func (e *engine) drain(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		d, err := e.svc.DispatchOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := e.svc.DeliverOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := e.db.DeliveryStats(ctx, e.scope)
		if d == 0 && n == 0 && st[domain.DeliveryPending] == 0 && st[domain.DeliveryProcessing] == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond) // the 1 ms test schedule
	}
	t.Fatal("deliveries did not settle")
}

func (e *engine) deliveries(t *testing.T, q ports.DeliveryQuery) []domain.WebhookDelivery {
	t.Helper()
	q.Scope, q.Limit = e.scope, 100
	ds, _, err := e.db.ListDeliveries(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func dialects(_ *testing.T) map[string]func(t testing.TB) string {
	return map[string]func(t testing.TB) string{
		"SQLite":   testenv.SQLiteDSN,
		"Postgres": testenv.PostgresDSN,
	}
}

// A receiver that fails three times and then succeeds: one DELIVERED
// delivery with four attempts, every request signed, every attempt with
// its own delivery id.
func TestRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	for name, dsn := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := app.SystemClock{}
			e := newEngine(t, dsn(t), clock, app.WebhooksConfig{})
			rc := newReceiver(t, clock)
			rc.answer = func(n int, _ *http.Request) int {
				if n <= 3 {
					return http.StatusInternalServerError
				}
				return http.StatusOK
			}
			ep := e.endpoint(t, rc.srv.URL+"/hooks", "charge.created")
			rc.setSecrets(ep.Secret)
			e.charge(t, "")
			e.drain(t, t.Context())

			ds := e.deliveries(t, ports.DeliveryQuery{})
			if len(ds) != 1 {
				t.Fatalf("%d deliveries, want 1", len(ds))
			}
			d := ds[0]
			if d.Status != domain.DeliveryDelivered || d.Attempts != 4 || d.DeliveredAt == nil || d.LastStatusCode == nil || *d.LastStatusCode != 200 {
				t.Fatalf("delivery %+v", d)
			}
			got := rc.deliveries()
			if len(got) != 4 || rc.bad.Load() != 0 {
				t.Fatalf("receiver saw %d requests (%d bad), want 4", len(got), rc.bad.Load())
			}
			ids := map[string]bool{}
			for _, g := range got {
				ids[g.deliveryID] = true
				if g.eventType != "charge.created" || string(g.body) != string(d.Payload) {
					t.Fatalf("request %+v does not carry the payload as stored", g)
				}
			}
			if len(ids) != 4 {
				t.Fatalf("delivery ids not unique per attempt: %v", ids)
			}
		})
	}
}

// A worker killed mid-attempt loses nothing: after its lease the delivery
// is made again by another worker, and there is exactly one DELIVERED
// record.
func TestKilledWorkerLosesNothing(t *testing.T) {
	t.Parallel()
	for name, dsn := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := testkit.NewClock(time.Now().UTC())
			e := newEngine(t, dsn(t), clock, app.WebhooksConfig{Lease: time.Minute})
			rc := newReceiver(t, clock)
			ep := e.endpoint(t, rc.srv.URL, "charge.created")
			rc.setSecrets(ep.Secret)
			rc.block = make(chan struct{})
			e.charge(t, "")
			if _, err := e.svc.DispatchOnce(t.Context()); err != nil {
				t.Fatal(err)
			}

			ctx, kill := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { _, err := e.svc.DeliverOnce(ctx); done <- err }()
			<-rc.arrived // the attempt reached the receiver...
			kill()       // ...and its worker dies before the answer
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			ds := e.deliveries(t, ports.DeliveryQuery{})
			if len(ds) != 1 || ds[0].Status != domain.DeliveryProcessing {
				t.Fatalf("after the kill: %+v", ds)
			}
			rc.mu.Lock()
			rc.block = nil
			rc.mu.Unlock()
			// Another worker finds nothing while the lease holds...
			if n, _ := e.svc.DeliverOnce(t.Context()); n != 0 {
				t.Fatalf("claimed a leased delivery")
			}
			// ...and takes it over once the lease ran out.
			clock.Advance(time.Minute + time.Second)
			if n, err := e.svc.DeliverOnce(t.Context()); n != 1 || err != nil {
				t.Fatalf("takeover claimed %d, %v", n, err)
			}
			ds = e.deliveries(t, ports.DeliveryQuery{})
			if len(ds) != 1 || ds[0].Status != domain.DeliveryDelivered || ds[0].Attempts != 2 {
				t.Fatalf("after takeover: %+v", ds)
			}
			if n := len(e.deliveries(t, ports.DeliveryQuery{Status: domain.DeliveryDelivered})); n != 1 {
				t.Fatalf("%d DELIVERED records", n)
			}
		})
	}
}

// Two workers (two processes' worth: separate pools) on one Postgres never
// make an attempt of the same delivery at the same time, and every
// delivery is made exactly once.
func TestTwoWorkersOnePostgres(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	clock := app.SystemClock{}
	e := newEngine(t, dsn, clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	rc.answer = func(int, *http.Request) int { time.Sleep(3 * time.Millisecond); return http.StatusNoContent }
	ep := e.endpoint(t, rc.srv.URL, "charge.created", "payment.created")
	rc.setSecrets(ep.Secret)
	const charges = 60
	for range charges {
		e.charge(t, "")
	}
	other := newService(openDB(t, dsn), clock, app.WebhooksConfig{ClaimBatch: 7})
	first := newService(e.db, clock, app.WebhooksConfig{ClaimBatch: 5})
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for _, s := range []*app.WebhookService{first, other} {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, _ = s.DispatchOnce(ctx)
				if n, err := s.DeliverOnce(ctx); err != nil && ctx.Err() == nil {
					t.Error(err)
				} else if n == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := e.db.DeliveryStats(t.Context(), e.scope)
		if err != nil {
			t.Fatal(err)
		}
		if st[domain.DeliveryDelivered] == 2*charges {
			break
		}
		if time.Now().After(deadline) {
			stop()
			wg.Wait()
			t.Fatalf("stats %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	wg.Wait()
	got := rc.deliveries()
	if len(got) != 2*charges {
		t.Fatalf("receiver saw %d requests for %d deliveries", len(got), 2*charges)
	}
	if rc.maxInFlight != 1 {
		t.Fatalf("a delivery was attempted %d times at once", rc.maxInFlight)
	}
}

// After a rotation, deliveries verify only with the new secret.
func TestRotationSignsWithNewSecretOnly(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	rc.setSecrets(ep.Secret)
	e.charge(t, "")
	e.drain(t, t.Context())

	fresh, err := e.svc.RotateEndpointSecret(t.Context(), e.caller(), ep.ID)
	if err != nil || len(fresh) != domain.WebhookSecretLen || fresh == ep.Secret {
		t.Fatalf("rotate: %q, %v", fresh, err)
	}
	rc.setSecrets(fresh, ep.Secret) // the merchant's deploy window
	e.charge(t, "")
	e.drain(t, t.Context())
	got := rc.deliveries()
	if len(got) != 2 {
		t.Fatalf("%d deliveries", len(got))
	}
	now := clock.Now()
	if err := domain.VerifyWebhook(got[0].signature, got[0].body, now, ep.Secret); err != nil {
		t.Fatalf("delivery before rotation: %v", err)
	}
	if err := domain.VerifyWebhook(got[1].signature, got[1].body, now, ep.Secret); !errors.Is(err, domain.ErrSignatureMismatch) {
		t.Fatalf("delivery after rotation verifies with the old secret: %v", err)
	}
	if err := domain.VerifyWebhook(got[1].signature, got[1].body, now, fresh); err != nil {
		t.Fatalf("delivery after rotation: %v", err)
	}
}

// Deleting an endpoint cancels its pending deliveries; nothing is sent.
func TestDeleteCancelsDeliveries(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	e.charge(t, "")
	if _, err := e.svc.DispatchOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.DeleteEndpoint(t.Context(), e.caller(), ep.ID); err != nil {
		t.Fatal(err)
	}
	e.drain(t, t.Context())
	ds := e.deliveries(t, ports.DeliveryQuery{})
	if len(ds) != 1 || ds[0].Status != domain.DeliveryCancelled {
		t.Fatalf("deliveries %+v", ds)
	}
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// 410 Gone deactivates the endpoint and cancels its other deliveries; a
// 429 with Retry-After waits at least that long.
func TestGoneAndRetryAfter(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{ClaimBatch: 1})
	gone := newReceiver(t, clock)
	gone.answer = func(int, *http.Request) int { return http.StatusGone }
	ep := e.endpoint(t, gone.srv.URL, "charge.created")
	gone.setSecrets(ep.Secret)
	e.charge(t, "")
	e.charge(t, "")
	e.drain(t, t.Context())
	eps, _ := e.svc.ListEndpoints(t.Context(), e.caller())
	if len(eps) != 1 || eps[0].Status != domain.EndpointInactive {
		t.Fatalf("endpoint after 410: %+v", eps)
	}
	if n := len(e.deliveries(t, ports.DeliveryQuery{Status: domain.DeliveryCancelled})); n != 2 {
		t.Fatalf("%d CANCELLED, want 2", n)
	}
	if n := len(gone.deliveries()); n != 1 {
		t.Fatalf("receiver called %d times after 410", n)
	}

	busy := newReceiver(t, clock)
	busy.answer = func(_ int, r *http.Request) int { return http.StatusTooManyRequests }
	busy.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		busy.serve(w, r)
	})
	ep2 := e.endpoint(t, busy.srv.URL, "charge.created")
	busy.setSecrets(ep2.Secret)
	e.charge(t, "")
	_, _ = e.svc.DispatchOnce(t.Context())
	before := time.Now()
	if n, err := e.svc.DeliverOnce(t.Context()); n != 1 || err != nil {
		t.Fatalf("deliver: %d, %v", n, err)
	}
	ds := e.deliveries(t, ports.DeliveryQuery{EndpointID: ep2.ID})
	if len(ds) != 1 || ds[0].Status != domain.DeliveryPending || ds[0].NextRetryAt == nil || ds[0].NextRetryAt.Sub(before) < 119*time.Second {
		t.Fatalf("after 429 with Retry-After 120: %+v", ds)
	}
}

// The per-transaction webhookUrl gets the charge's legacy events only,
// signed sha256= with the account's transaction secret.
func TestTransactionWebhookURL(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock, e.acct.TransactionWebhookSecret)
	e.charge(t, rc.srv.URL+"/tx")
	e.drain(t, t.Context())
	got := rc.deliveries()
	if len(got) != 1 || got[0].eventType != "payment.created" || !strings.HasPrefix(got[0].signature, "sha256=") {
		t.Fatalf("transaction webhook got %+v", got)
	}
	// After a rotation the new secret signs.
	fresh, err := e.svc.RotateTransactionSecret(t.Context(), e.caller())
	if err != nil {
		t.Fatal(err)
	}
	rc.setSecrets(fresh)
	e.charge(t, rc.srv.URL+"/tx")
	e.drain(t, t.Context())
	if n := len(rc.deliveries()); n != 2 || rc.bad.Load() != 0 {
		t.Fatalf("after rotation: %d deliveries, %d bad", n, rc.bad.Load())
	}
}

// Resend writes a fresh event of the current status: a new delivery with a
// new evt_ id.
func TestResendCreatesFreshDelivery(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	rc.setSecrets(ep.Secret)
	c := e.charge(t, "")
	e.drain(t, t.Context())
	payments := e.payments()
	got, err := payments.ResendWebhook(t.Context(), e.caller(), c.ID())
	if err != nil || got.Status() != domain.TxPending {
		t.Fatalf("resend: %v", err)
	}
	e.drain(t, t.Context())
	ds := e.deliveries(t, ports.DeliveryQuery{})
	if len(ds) != 2 || ds[0].EventID == ds[1].EventID || ds[0].Status != domain.DeliveryDelivered {
		t.Fatalf("after resend: %+v", ds)
	}
	if _, err := payments.ResendWebhook(t.Context(), e.caller(), "nope"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("resend of an unknown charge: %v", err)
	}
}

// A receiver that always fails gets exactly 15 attempts; then FAILED.
func TestFailsAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	rc.answer = func(int, *http.Request) int { return http.StatusBadGateway }
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	rc.setSecrets(ep.Secret)
	e.charge(t, "")
	e.drain(t, t.Context())
	ds := e.deliveries(t, ports.DeliveryQuery{})
	if len(ds) != 1 || ds[0].Status != domain.DeliveryFailed || ds[0].Attempts != domain.MaxDeliveryAttempts ||
		ds[0].NextRetryAt != nil || ds[0].LastError == nil || *ds[0].LastError != "receiver answered HTTP 502" {
		t.Fatalf("delivery %+v", ds)
	}
	if n := len(rc.deliveries()); n != domain.MaxDeliveryAttempts {
		t.Fatalf("receiver saw %d attempts", n)
	}
}
