// Package dashboard is the merchant's web dashboard, served at /dashboard:
// log in with the dashboard e-mail and password, then see the balance and
// volume, charges (search, filters, detail with its event and webhook
// timeline, refunds, receipts, splits), subscriptions (Pix Automático: list,
// detail with its cycles, cancel), refunds, payouts, webhook endpoints and their
// deliveries, API keys and request logs, a platform's sub-accounts (list,
// create, detail, disable, login invitations) and the login's security
// (two-step verification with TOTP, sessions listed and ended), in live or
// test mode, in Brazilian Portuguese or English. An invitee accepts a
// sub-account login at /dashboard/invite/{token}; that login sees the
// sub-account's own data only.
//
// Pages are rendered on the server with html/template; the embedded
// stylesheet and a small script (copy buttons, confirmations) are the only
// assets, every form works without the script, and nothing is loaded from
// another origin. It calls the app services directly.
//
// The session is the same JWT the API's Bearer flow uses
// (app.SessionService), kept in an HttpOnly, SameSite=Strict cookie
// (Secure when served over https). A login with TOTP asks the code on a
// second form (/dashboard/login/code). Every form carries a CSRF token
// derived from the session token; the login forms use a double-submit
// cookie.
package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// Deps are the services the dashboard calls.
type Deps struct {
	Sessions *app.SessionService
	// SecondFactor turns a user's TOTP on and off (the security page).
	SecondFactor *app.SecondFactorService
	Keys         *app.KeyService
	Reads        *app.DashboardReads
	Payments     *app.PaymentService
	Webhooks     *app.WebhookService
	Receipts     *app.ReceiptService
	Payouts      *app.PayoutService
	// Subscriptions are read and cancelled through the service the API
	// uses.
	Subscriptions *app.SubscriptionService
	// Subaccounts are a platform's sellers (nil: no sub-account pages);
	// Logins invites and accepts their dashboard logins (nil: none).
	Subaccounts *app.SubaccountService
	Logins      *app.SubaccountLogins
	// QR draws the otpauth:// URI of a TOTP secret being set up; it must
	// keep no copy (qr.Private).
	QR  QRRenderer
	Log *slog.Logger
}

// QRRenderer draws a payload as a PNG QR code.
type QRRenderer interface {
	PNG(payload string) ([]byte, error)
}

// Config tunes the dashboard.
type Config struct {
	// SecureCookies marks the cookies Secure; quitad sets it when its base
	// URL is https (a request over TLS gets Secure cookies anyway).
	SecureCookies bool
	// ClientIP is the caller's address as the HTTP layer trusts it (for
	// the login throttles); nil uses the TCP peer.
	ClientIP func(*http.Request) string
}

// Controller serves the dashboard.
type Controller struct {
	d   Deps
	cfg Config
	log *slog.Logger
}

// New returns the dashboard controller.
func New(d Deps, cfg Config) *Controller {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = func(r *http.Request) string {
			host := r.RemoteAddr
			if i := strings.LastIndexByte(host, ':'); i > 0 {
				host = host[:i]
			}
			return strings.Trim(host, "[]")
		}
	}
	return &Controller{d: d, cfg: cfg, log: log}
}

// Base is the path the dashboard is mounted on.
const Base = "/dashboard"

// Routes registers the dashboard on r, a subrouter of Base.
func (c *Controller) Routes(r *mux.Router) {
	r.HandleFunc("/static/{name}", c.asset).Methods(http.MethodGet, http.MethodHead).Name("dashboard.asset")
	r.HandleFunc("/login", c.loginPage).Methods(http.MethodGet, http.MethodHead).Name("dashboard.login_page")
	r.HandleFunc("/login", c.login).Methods(http.MethodPost).Name("dashboard.login")
	r.HandleFunc("/login/code", c.codePage).Methods(http.MethodGet, http.MethodHead).Name("dashboard.login_code_page")
	r.HandleFunc("/login/code", c.loginCode).Methods(http.MethodPost).Name("dashboard.login_code")
	r.HandleFunc("/lang/{lang}", c.setLang).Methods(http.MethodGet).Name("dashboard.lang")
	r.HandleFunc("/invite/{token}", c.invitePage).Methods(http.MethodGet, http.MethodHead).Name("dashboard.invite_page")
	r.HandleFunc("/invite/{token}", c.acceptInvite).Methods(http.MethodPost).Name("dashboard.invite_accept")
	r.HandleFunc("/logout", c.authed(c.logout)).Methods(http.MethodPost).Name("dashboard.logout")
	r.HandleFunc("/logout-all", c.authed(c.logoutAll)).Methods(http.MethodPost).Name("dashboard.logout_all")
	r.HandleFunc("", c.home).Methods(http.MethodGet, http.MethodHead).Name("dashboard.root")
	r.HandleFunc("/", c.home).Methods(http.MethodGet, http.MethodHead).Name("dashboard.home")

	m := r.PathPrefix("/{mode:live|test}").Subrouter()
	get := func(path, name string, h pageHandler) {
		m.HandleFunc(path, c.authed(c.page(h))).Methods(http.MethodGet, http.MethodHead).Name("dashboard." + name)
	}
	post := func(path, name string, h pageHandler) {
		m.HandleFunc(path, c.authed(c.page(h))).Methods(http.MethodPost).Name("dashboard." + name)
	}
	get("/", "overview", c.overview)
	get("/charges", "charges", c.charges)
	get("/charges/{id}", "charge", c.charge)
	post("/charges/{id}/refund", "charge_refund", c.refund)
	m.HandleFunc("/charges/{id}/receipt", c.authed(c.receipt)).Methods(http.MethodGet).Name("dashboard.charge_receipt")
	m.HandleFunc("/charges/{id}/refunds/{refund}/receipt", c.authed(c.refundReceipt)).Methods(http.MethodGet).Name("dashboard.refund_receipt")
	get("/subscriptions", "subscriptions", c.subscriptions)
	get("/subscriptions/{id}", "subscription", c.subscription)
	post("/subscriptions/{id}/cancel", "subscription_cancel", c.cancelSubscription)
	get("/refunds", "refunds", c.refunds)
	get("/payouts", "payouts", c.payouts)
	post("/payouts/{id}/cancel", "payout_cancel", c.cancelPayout)
	m.HandleFunc("/payouts/{id}/receipt", c.authed(c.payoutReceipt)).Methods(http.MethodGet).Name("dashboard.payout_receipt")
	get("/webhooks", "webhooks", c.webhooks)
	post("/webhooks", "webhook_create", c.createEndpoint)
	post("/webhooks/{id}/rotate", "webhook_rotate", c.rotateEndpoint)
	post("/webhooks/{id}/delete", "webhook_delete", c.deleteEndpoint)
	post("/deliveries/{id}/resend", "delivery_resend", c.resendDelivery)
	get("/keys", "keys", c.keys)
	post("/keys", "key_issue", c.issueKey)
	post("/keys/{id}/rotate", "key_rotate", c.rotateKey)
	post("/keys/{id}/revoke", "key_revoke", c.revokeKey)
	get("/logs", "logs", c.logs)
	get("/security", "security", c.security)
	post("/security/totp", "totp_begin", c.beginTOTP)
	get("/security/totp", "totp_setup", c.totpSetup)
	m.HandleFunc("/security/totp/qr.png", c.authed(c.totpQR)).Methods(http.MethodGet, http.MethodHead).Name("dashboard.totp_qr")
	post("/security/totp/confirm", "totp_confirm", c.confirmTOTP)
	post("/security/totp/disable", "totp_disable", c.disableTOTP)
	post("/security/sessions/end-others", "sessions_end_others", c.endOtherSessions)
	post("/security/sessions/{id}/revoke", "session_revoke", c.revokeSession)
	get("/subaccounts", "subaccounts", c.platformOnly(c.subaccounts))
	post("/subaccounts", "subaccount_create", c.platformOnly(c.createSubaccount))
	get("/subaccounts/{id}", "subaccount", c.platformOnly(c.subaccount))
	post("/subaccounts/{id}/disable", "subaccount_disable", c.platformOnly(c.disableSubaccount))
	post("/subaccounts/{id}/invitations", "subaccount_invite", c.platformOnly(c.inviteLogin))
	m.NotFoundHandler = http.HandlerFunc(c.notFound)
	r.NotFoundHandler = http.HandlerFunc(c.notFound)
}

// session is the authenticated request: the user, the token (for the
// CSRF token), and the caller the user acts as in the page's mode.
type session struct {
	user   app.DashboardUser
	token  string
	caller app.Caller
	mode   domain.Mode
}

type ctxSession struct{}

func sessionOf(ctx context.Context) *session {
	s, _ := ctx.Value(ctxSession{}).(*session)
	return s
}

// authed resolves the session cookie; without a valid one a GET goes to
// the login page (and comes back after) and anything else is refused. A
// POST's form is read here, under maxForm, before the CSRF check or the
// handler looks at a field (readForm).
func (c *Controller) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ck, err := c.cookie(r, sessionCookie)
		var u app.DashboardUser
		if err == nil {
			u, err = c.d.Sessions.Verify(r.Context(), ck.Value)
		}
		if err != nil {
			c.loggedOut(w, r)
			return
		}
		s := &session{user: u, token: ck.Value, mode: domain.ModeLive}
		if mux.Vars(r)["mode"] == string(domain.ModeTest) {
			s.mode = domain.ModeTest
		}
		if r.Method == http.MethodPost {
			if !c.readForm(w, r, maxForm) {
				return
			}
			if !c.csrfOK(r, s.token) {
				c.forbidden(w, r)
				return
			}
		}
		s.caller, err = c.d.Reads.Caller(r.Context(), u, s.mode)
		switch {
		case errors.Is(err, app.ErrInvalidSession):
			// The account is gone or a disabled sub-account.
			c.loggedOut(w, r)
			return
		case err != nil:
			c.fail(w, r, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), ctxSession{}, s)))
	}
}

// loggedOut answers a request without a usable session: a GET goes to the
// login page (and comes back after), anything else is refused.
func (c *Controller) loggedOut(w http.ResponseWriter, r *http.Request) {
	c.clearCookie(w, r, sessionCookie)
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		http.Redirect(w, r, Base+"/login?next="+safeNext(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	c.forbidden(w, r)
}

// home sends the merchant to the overview of live mode.
func (c *Controller) home(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Base+"/live/", http.StatusSeeOther)
}

// setLang remembers the language for a year and goes back.
func (c *Controller) setLang(w http.ResponseWriter, r *http.Request) {
	lang := mux.Vars(r)["lang"]
	if lang != langEN {
		lang = langPT
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: lang, Path: Base, MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
}

// safeNext keeps a redirect target inside the dashboard: a path under
// Base with nothing that could lead elsewhere (another host, "..", a
// backslash some browsers read as a slash, control characters).
func safeNext(next string) string {
	p, _, _ := strings.Cut(next, "?")
	if !strings.HasPrefix(next, Base+"/") || strings.ContainsAny(next, "\\\r\n\t") || strings.Contains(next, "//") ||
		path.Clean(p) != strings.TrimSuffix(p, "/") {
		return Base + "/"
	}
	return next
}
