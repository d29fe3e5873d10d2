// Package quitatest runs a real Quita server inside a Go test: the whole
// HTTP API on an in-memory SQLite database (or any database you name) with
// the sandbox acquirer. Merchants use it to test their integration against
// the real request and response shapes, through the Go SDK
// (github.com/quitapix/quita/client), without a network:
//
//	func TestCheckoutIsFulfilledWhenPaid(t *testing.T) {
//		srv := quitatest.NewServer(t, quitatest.Options{})
//		qc := srv.Client() // an SDK client on a test key
//
//		hook := srv.NewReceiver(t, qc, client.EventChargePaid)
//		hook.Handle(shop.WebhookHandler(hook.Endpoint.Secret)) // your handler
//
//		ch, err := qc.Charges.Create(ctx, client.ChargeParams{Amount: 1990})
//		...
//		_, err = qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{PayerDocument: "52998224725"})
//		...
//		d := hook.Wait(t, client.EventChargePaid, ch.ID) // delivered, signed, to your handler
//		if d.Status != http.StatusOK { ... }             // what your handler answered
//	}
//
// The test helpers of the SDK (client.TestHelpersService) pay a charge
// with any payer document, expire it, fail a refund or move a payment to
// any status, exactly as against a deployed server in test mode. The
// server runs no background work by itself: Advance moves its clock (a
// charge past expires_at expires) and runs what became due; RunWorkers
// runs it without moving the clock (refunds advance, held funds are
// released); FlushWebhooks delivers the events so far. With
// Options.DeliverWebhooks the deliveries also flow in the background.
//
// NewAccount adds accounts (srv.ClientFor(acct) is a client on one),
// DashboardClient logs in to the dashboard for the API-key routes, and
// Start runs a server outside a test (TestMain, runnable examples).
package quitatest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// Options configure a test server. The zero value is an in-memory SQLite
// server without Redis on the wall clock.
type Options struct {
	// DatabaseURL defaults to a fresh in-memory SQLite database.
	DatabaseURL string
	// RedisURL and RedisPrefix enable the Redis idempotency cache.
	RedisURL    string
	RedisPrefix string
	// Clock defaults to a Clock that follows the wall clock and can be
	// moved forward (see Clock.Advance).
	Clock ports.Clock
	// Log receives the server's JSON logs; nil discards them.
	Log io.Writer
	// JWTSecret signs dashboard tokens; servers that must accept each
	// other's tokens share one. Empty = a random secret per server.
	JWTSecret string
	// DeliverWebhooks runs the webhook dispatcher and delivery workers in
	// the background, so registered endpoints receive events. Tests that
	// drive delivery themselves call App.Webhooks.DispatchOnce and
	// DeliverOnce instead.
	DeliverWebhooks bool
	// Webhooks tunes delivery (e.g. a short RetrySchedule).
	Webhooks app.WebhooksConfig
	// StrictWebhookURLs applies the production SSRF rules to endpoint URLs;
	// by default a test server lets them point at loopback (httptest).
	StrictWebhookURLs bool
	// AuthCacheTTL is how long the server trusts an API-key lookup; revoke
	// and rotate wait this long. Default 100 ms, so tests of revocation
	// stay quick while exercising the same rule as production (1 s).
	AuthCacheTTL time.Duration
	// ExpiryGrace is how long after expires_at an unpaid charge stays
	// pending before it expires and charge.expired is sent. Zero is
	// production's app.DefaultExpiryGrace (3 min), so a test moves the
	// clock past expires_at plus that; negative expires at expires_at.
	ExpiryGrace time.Duration
}

// Server is a running Quita.
type Server struct {
	// URL is the server's origin; BaseURL is URL + "/v1".
	URL     string
	BaseURL string
	// Sandbox is the acquirer; SetDown(true) simulates a PSP outage.
	Sandbox *sandbox.Acquirer
	App     *wiring.App
	Clock   ports.Clock

	close func()
	// tb fails the test that started the server (nil after Start).
	tb testing.TB

	emails      sync.Map // account id → dashboard e-mail
	defaultOnce sync.Once
	defaultAcct Account
	defaultErr  error
}

// Account is a merchant account with the cleartext of its keys.
type Account = app.NewAccount

// NewServer starts a server and stops it when the test ends.
func NewServer(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("quitatest: %v", err)
	}
	s.tb = t
	t.Cleanup(s.Close)
	return s
}

// Start starts a server outside a test, for TestMain or a runnable
// example; Close stops it. Tests use NewServer.
func Start(opts Options) (*Server, error) {
	if opts.DatabaseURL == "" {
		opts.DatabaseURL = "sqlite::memory:"
	}
	if opts.Clock == nil {
		opts.Clock = NewClock()
	}
	var logw io.Writer = io.Discard
	if opts.Log != nil {
		logw = opts.Log
	}
	log := slog.New(slog.NewJSONHandler(logw, nil))
	hs := httptest.NewUnstartedServer(nil)
	origin := "http://" + hs.Listener.Addr().String()
	cfg := wiring.Config{
		DatabaseURL: opts.DatabaseURL, RedisURL: opts.RedisURL, RedisPrefix: opts.RedisPrefix, JWTSecret: opts.JWTSecret,
		BaseURL: origin + "/v1", CheckoutURLBase: origin + "/checkout",
		PixFees:             domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}},
		WebhookAllowPrivate: !opts.StrictWebhookURLs, Webhooks: opts.Webhooks,
		AuthCacheTTL: opts.AuthCacheTTL, ExpiryGrace: opts.ExpiryGrace,
	}
	if cfg.AuthCacheTTL == 0 {
		cfg.AuthCacheTTL = 100 * time.Millisecond
	}
	sb := sandbox.New(sandbox.Config{LocationHost: sandbox.LocationHostFromURL(cfg.CheckoutURLBase), CheckoutBase: cfg.CheckoutURLBase}, opts.Clock)
	a, cleanup, err := wiring.InitializeWith(context.Background(), cfg, log, opts.Clock, sb, sb)
	if err != nil {
		hs.Close()
		return nil, fmt.Errorf("start server: %w", err)
	}
	hs.Config.Handler = a.Handler
	hs.Start()
	stopWebhooks := func() {}
	if opts.DeliverWebhooks {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); a.Webhooks.Run(ctx) }()
		stopWebhooks = func() { cancel(); <-done }
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stopWebhooks()
			hs.Close()
			a.Charges.WaitBackground()
			cleanup()
		})
	}
	return &Server{URL: origin, BaseURL: cfg.BaseURL, Sandbox: sb, App: a, Clock: opts.Clock, close: stop}, nil
}

// Close stops the server (NewServer's servers stop by themselves when
// their test ends). It is safe to call twice.
func (s *Server) Close() { s.close() }

var memSeq atomic.Int64

// NewAccount creates a merchant account with one live and one test key.
func (s *Server) NewAccount(t testing.TB, name string) Account {
	t.Helper()
	a, err := s.newAccount(name)
	if err != nil {
		t.Fatalf("quitatest: create account: %v", err)
	}
	return a
}

// Password is the dashboard password of every account the kit creates
// (log in as Account.Email with it: Client().Auth.Login).
const Password = "quitatest-password"

func (s *Server) newAccount(name string) (Account, error) {
	email := fmt.Sprintf("owner%d@%s.example.com", memSeq.Add(1), "quitatest")
	a, err := s.App.Accounts.CreateAccount(context.Background(), app.NewAccountInput{
		Name: name, Email: email, Password: Password, City: "SAO PAULO",
	})
	if err == nil {
		s.emails.Store(a.AccountID, email)
	}
	return a, err
}

// Clock follows the wall clock plus an offset that tests move forward
// (Advance), so a charge can expire without the test sleeping. It is the
// clock Quita's own tests share.
type Clock = testkit.Clock

var _ ports.Clock = (*Clock)(nil)

// NewClock returns a clock at the wall-clock time.
func NewClock() *Clock { return testkit.NewClock(time.Time{}) }
