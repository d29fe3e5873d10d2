// Package httpapi is Quita's HTTP interface (gorilla/mux): the merchant
// API under /v1, the public QR images under the checkout base, and the
// health endpoints. Controllers register named routes; one function maps
// errors to the envelope.
package httpapi

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// QRRenderer draws a BR Code as a PNG.
type QRRenderer interface {
	PNG(payload string) ([]byte, error)
}

// Pinger reports whether a dependency answers, for /readyz.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config is what the HTTP layer needs to know about its addresses.
type Config struct {
	Links domain.Links
	// CheckoutPath is the path part of the checkout base ("/checkout"),
	// under which quitad serves the public QR images.
	CheckoutPath string
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (QUITA_TRUSTED_PROXIES); none by default.
	TrustedProxies []netip.Prefix
	// PSPCallbackCAs, when set, make the API Pix callback require a client
	// certificate chaining to them (mutual TLS; quitad must serve TLS).
	PSPCallbackCAs *x509.CertPool
	// PSPCallbackLimit is each account's budget of authenticated API Pix
	// callbacks; the zero value means DefaultPSPCallbackLimit.
	PSPCallbackLimit ports.RateLimit
}

// Deps are the services the HTTP layer calls.
type Deps struct {
	Charges   *app.ChargeService
	Accounts  *app.AccountService
	Simulator ports.PaymentSimulator
	QR        QRRenderer
	Ready     map[string]Pinger
	// Optional are dependencies reported by /healthz only (Redis).
	Optional map[string]Pinger
	Log      *slog.Logger
	// Dashboard: sessions, key management, request logs, guards.
	Sessions    *app.SessionService
	Keys        *app.KeyService
	RateLimits  RateLimitSource
	Limiter     ports.RateLimiter
	RequestLogs RequestRecorder
	// AuthFailures counts failed API-key authentications per client
	// address (nil: no limit).
	AuthFailures ports.LoginAttempts
	// Checkout is the hosted checkout page (adapters/checkout), mounted on
	// the checkout path after the QR route; nil serves no page.
	Checkout interface{ Routes(*mux.Router) }
	// Dashboard is the merchant's web dashboard (adapters/dashboard),
	// mounted on /dashboard; nil serves none.
	Dashboard interface{ Routes(*mux.Router) }
	// Webhooks serves /v1/webhooks; nil serves no webhook routes.
	Webhooks *app.WebhookService
	// Events serves /v1/events; nil serves no event routes.
	Events *app.EventService
	// Payments serves /v1/payments and /v1/wallets; nil serves neither.
	Payments *app.PaymentService
	// Receipts draws the payments' receipts; nil serves no receipt route.
	Receipts *app.ReceiptService
	// Payouts serves /v1/payouts and its test helpers; nil serves none.
	Payouts *app.PayoutService
	// Subscriptions serves /v1/subscriptions, its test helpers and the
	// subscriptions' hosted pages; nil serves none.
	Subscriptions *app.SubscriptionService
	// PixReceipts handles API Pix notifications; with PixCallbacks, which
	// authenticates them, it serves the callback route (else no route).
	PixReceipts  *app.PixReceiptService
	PixCallbacks PixCallbackAuth
	// RecurringCallbacks, with PixReceipts and PixCallbacks, serves the
	// Pix Automático callback routes (/rec, /cobr); nil serves neither.
	RecurringCallbacks RecurringCallbacks
	// Admission bounds the requests served at once and refuses the excess
	// quickly (admission.go); nil admits everything.
	Admission *Admission
	// CreateFlight reports the store's create flight for /metrics; nil
	// exports none.
	CreateFlight func() ports.FlightStats
	// KeyedWrites records the answers of the authenticated POSTs that are
	// not money writes, so they honour an Idempotency-Key header
	// (keyed_writes.go); nil ignores the header there. It holds one-time
	// secrets: production passes an idempotency.Sealed.
	KeyedWrites ports.IdempotencyCache
	// Subaccounts serves /v1/subaccounts and lets a platform's key act
	// for its sub-accounts (Quita-Account); nil serves no such route and
	// refuses the header for any account but the key's own.
	Subaccounts *app.SubaccountService
	// SubaccountLogins serves the invitations of sub-account dashboard
	// logins (/v1/subaccounts/{id}/invitations).
	SubaccountLogins *app.SubaccountLogins
	// Transfers serves /v1/transfers; nil serves none.
	Transfers *app.TransferService
}

// CheckoutPathFromURL returns the path part of a checkout base URL.
func CheckoutPathFromURL(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Path == "" {
		return "/checkout"
	}
	return strings.TrimRight(u.Path, "/")
}

// NewHandler builds the whole HTTP interface.
func NewHandler(cfg Config, d Deps) http.Handler {
	r := mux.NewRouter()
	metrics := newHTTPMetrics()
	if d.Charges != nil {
		metrics.watchReturns(d.Charges.ReturnStats)
	}
	if d.CreateFlight != nil {
		metrics.watchCreateFlight(d.CreateFlight)
	}
	rl := requestLog(d.Log, d.RequestLogs, metrics)
	r.Use(rl, d.Admission.middleware, withClientIP(cfg.TrustedProxies), rejectUnstorableText)
	// mux runs middleware only on matched routes: wrap the fallbacks so they
	// carry a request id too.
	notFound := rl(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "route_not_found",
			Message: "no such route: " + capText(r.Method, 16) + " " + capText(r.URL.Path, maxLoggedPath)})
	}))
	notAllowed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, &apiError{Status: http.StatusMethodNotAllowed, Type: typeInvalidRequest, Code: "method_not_allowed",
			Message: "method " + capText(r.Method, 16) + " is not allowed on " + capText(r.URL.Path, maxLoggedPath)})
	})
	r.NotFoundHandler, r.MethodNotAllowedHandler = notFound, rl(notAllowed)

	health := &HealthController{ready: d.Ready, optional: d.Optional}
	health.Routes(r)
	if d.Payouts != nil {
		metrics.watchPayouts(d.Payouts)
	}
	metrics.Routes(r)

	public := &PublicController{charges: d.Charges, qr: d.QR}
	checkout := r.PathPrefix(cfg.CheckoutPath).Subrouter()
	public.Routes(checkout)
	if d.Subscriptions != nil {
		(&subscriptionQR{subs: d.Subscriptions, qr: d.QR}).Routes(checkout)
	}
	if d.Checkout != nil {
		d.Checkout.Routes(checkout)
	}

	dashboardRoutes(r, d)
	if d.Dashboard != nil {
		d.Dashboard.Routes(r.PathPrefix("/dashboard").Subrouter())
	}
	webhooks := &WebhooksController{webhooks: d.Webhooks}
	webhooks.CatalogRoutes(r) // public: before the apikey-protected /v1 router
	openAPIRoutes(r)          // public too
	if d.PixReceipts != nil && d.PixCallbacks != nil {
		log := d.Log
		if log == nil {
			log = slog.Default()
		}
		(&ProvidersController{receipts: d.PixReceipts, payouts: d.Payouts, recurring: d.RecurringCallbacks, auth: d.PixCallbacks, cas: cfg.PSPCallbackCAs,
			limit: cfg.PSPCallbackLimit, failures: d.AuthFailures, limiter: d.Limiter, log: log}).Routes(r) // PSP callbacks: no API key
	}
	v1 := r.PathPrefix("/v1").Subrouter()
	v1.Use(APIKeyAuth(d))
	v1.Use(keyedWrites(d.KeyedWrites, apiKeyScope, d.Log))
	(&ChargeBatchesController{charges: d.Charges, links: cfg.Links}).Routes(v1) // before /charges/{id}
	charges := &ChargesController{charges: d.Charges, links: cfg.Links, qr: d.QR}
	charges.Routes(v1)
	helpers := &TestHelpersController{charges: d.Charges, sim: d.Simulator, links: cfg.Links}
	helpers.Routes(v1)
	if d.Payments != nil {
		(&PaymentsController{payments: d.Payments, qr: d.QR, receipts: d.Receipts}).Routes(v1)
	}
	if d.Webhooks != nil {
		webhooks.Routes(v1)
	}
	if d.Events != nil {
		(&EventsController{events: d.Events}).Routes(v1)
	}
	if d.Payouts != nil {
		(&PayoutsController{payouts: d.Payouts, receipts: d.Receipts}).Routes(v1)
	}
	if d.Subaccounts != nil {
		(&SubaccountsController{subs: d.Subaccounts, logins: d.SubaccountLogins}).Routes(v1)
	}
	if d.Transfers != nil {
		(&TransfersController{transfers: d.Transfers}).Routes(v1)
	}
	if d.Subscriptions != nil {
		(&SubscriptionsController{subs: d.Subscriptions, sim: d.Simulator, links: cfg.Links, qr: d.QR}).Routes(v1)
	}
	// The fallback routes are on r, whose middleware already logs them.
	methodFallbacks(r, notAllowed)
	return r
}

// methodFallbacks answers 405 for a known path with a method it does not
// serve. gorilla/mux loses the method mismatch when a path is served by one
// of several subrouters and answers 404, so each known path template gets a
// last, method-less route.
func methodFallbacks(r *mux.Router, h http.Handler) {
	seen := map[string]bool{}
	var tpls []string
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if _, merr := route.GetMethods(); err != nil || merr != nil || seen[tpl] {
			return nil
		}
		seen[tpl] = true
		tpls = append(tpls, tpl)
		return nil
	})
	for _, tpl := range tpls {
		r.Path(tpl).Handler(h)
	}
}

// HealthController answers liveness and readiness probes. Readiness
// checks only what a request cannot do without (the database); optional
// dependencies (Redis: every use of it has a database or in-process
// fallback) are reported under /healthz's checks and never make quitad
// unready, so a Redis outage cannot take every instance out of rotation.
type HealthController struct {
	ready    map[string]Pinger
	optional map[string]Pinger
}

// Routes registers /healthz and /readyz.
func (c *HealthController) Routes(r *mux.Router) {
	r.HandleFunc("/healthz", c.healthz).Methods(http.MethodGet).Name("healthz")
	r.HandleFunc("/readyz", c.readyz).Methods(http.MethodGet).Name("readyz")
}

func (c *HealthController) healthz(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"status": "ok"}
	if len(c.optional) > 0 {
		checks, _ := ping(r.Context(), c.optional)
		out["checks"] = checks
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *HealthController) readyz(w http.ResponseWriter, r *http.Request) {
	checks, ok := ping(r.Context(), c.ready)
	status := http.StatusOK
	if !ok {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]any{"status": map[bool]string{true: "ok", false: "unavailable"}[ok], "checks": checks})
}

// ping asks each dependency, for at most a second in all.
func ping(ctx context.Context, deps map[string]Pinger) (map[string]string, bool) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	out, ok := make(map[string]string, len(deps)), true
	for name, p := range deps {
		if err := p.Ping(ctx); err != nil {
			out[name], ok = "unavailable", false
			continue
		}
		out[name] = "ok"
	}
	return out, ok
}
