// Package checkout is the hosted checkout page a payer opens from a
// charge's checkout_url: the amount, the merchant, the Pix QR code and
// copy-and-paste code, a countdown to the expiry and the live status, in
// Brazilian Portuguese or English. Everything it serves is embedded (one
// HTML template, one stylesheet, one script) and it makes no request to
// any other origin. The page is public: the unguessable raw id in its
// address is the only credential, so it shows an allowlist (app.CheckoutView)
// and nothing private.
package checkout

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
)

// Source reads charges for the page. *app.CheckoutService implements it.
type Source interface {
	// View returns the payer's view of a charge; ports.ErrNotFound for an
	// unknown raw id.
	View(ctx context.Context, rawID string) (app.CheckoutView, error)
	// Status returns only the public status and expiry; ports.ErrNotFound
	// for an unknown raw id.
	Status(ctx context.Context, rawID string) (app.CheckoutStatus, error)
	// CardScreen returns the view of a test-mode charge offering
	// CREDIT_CARD for the sandbox card screen; ports.ErrNotFound otherwise.
	CardScreen(ctx context.Context, rawID string) (app.CheckoutView, error)
	// CardDecision approves or declines the card payment of the sandbox
	// card screen (test mode only).
	CardDecision(ctx context.Context, rawID string, approve bool) (app.CheckoutStatus, error)
}

var _ Source = (*app.CheckoutService)(nil)

// Config tunes the page.
type Config struct {
	// PollInterval is how often an open page asks for the status while the
	// charge is pending (default 3 s; slower while processing and after
	// errors).
	PollInterval time.Duration
	// Subscriptions, when set, serves the hosted pages of QR-journey
	// subscriptions (subscription.go).
	Subscriptions SubscriptionSource
}

// Controller serves the checkout page, its status endpoint and its assets.
type Controller struct {
	src  Source
	subs SubscriptionSource
	log  *slog.Logger
	poll time.Duration
}

// New returns the checkout controller.
func New(src Source, log *slog.Logger, cfg Config) *Controller {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 3 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{src: src, subs: cfg.Subscriptions, log: log, poll: cfg.PollInterval}
}

// Routes registers the page on the checkout subrouter (the path of
// {checkout_url_base}). Asset names cannot collide with raw ids, which are
// 35 (or, in the older format, 26) base32 characters.
func (c *Controller) Routes(r *mux.Router) {
	r.HandleFunc("/static/{name}", c.asset).Methods(http.MethodGet, http.MethodHead).Name("checkout.asset")
	r.HandleFunc("/{id}/status", c.status).Methods(http.MethodGet).Name("checkout.status")
	r.HandleFunc("/{id}/card", c.cardPage).Methods(http.MethodGet, http.MethodHead).Name("checkout.card")
	r.HandleFunc("/{id}/card", c.cardDecide).Methods(http.MethodPost).Name("checkout.card_decide")
	// The sandbox acquirer's cardRedirectUrl ({base}/pix/card/{id}).
	r.HandleFunc("/pix/card/{id}", c.cardRedirect).Methods(http.MethodGet, http.MethodHead).Name("checkout.card_redirect")
	c.subscriptionRoutes(r)
	r.HandleFunc("/{id}", c.page).Methods(http.MethodGet, http.MethodHead).Name("checkout.page")
	// The bare checkout path is a link cut short. No catch-all beyond
	// that: it would shadow pages other controllers mount here later.
	r.HandleFunc("/", c.notFound).Methods(http.MethodGet, http.MethodHead).Name("checkout.not_found")
}
