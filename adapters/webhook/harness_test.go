package webhook_test

import (
	"context"
	"crypto/rand"
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
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
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

// newAccount creates an account (with its transaction-webhook secrets) and
// returns its test-mode scope.
func newAccount(t testing.TB, db *store.DB, now time.Time) (domain.Account, ports.Scope) {
	t.Helper()
	raw, _ := domain.NewRawID(rand.Reader)
	secret, _ := domain.NewWebhookSecret(rand.Reader)
	testSecret, _ := domain.NewWebhookSecret(rand.Reader)
	acct := domain.Account{ID: "acct_" + raw, Name: "Loja", MerchantName: "Loja", MerchantCity: "SAO PAULO",
		TransactionWebhookSecret: secret, TestTransactionWebhookSecret: testSecret, CreatedAt: now}
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
	charges := app.NewChargeService(e.db, exactlyonce.NewDatabaseChecked(e.db, nil, e.clock, app.RandomIDs{}, log, exactlyonce.Config{}), nil, nil, e.clock, app.RandomIDs{}, log,
		app.ChargesConfig{Links: links})
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
