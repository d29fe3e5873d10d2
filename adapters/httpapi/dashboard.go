package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// DashboardAuth resolves a dashboard session token.
type DashboardAuth interface {
	Verify(ctx context.Context, token string) (app.DashboardUser, error)
}

type ctxDashKey struct{}

func dashboardUser(ctx context.Context) app.DashboardUser {
	u, _ := ctx.Value(ctxDashKey{}).(app.DashboardUser)
	return u
}

// requireDashboard authenticates "Authorization: Bearer <dashboard JWT>".
// An apikey header is no substitute: missing or invalid token → 401.
func requireDashboard(auth DashboardAuth) mux.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			token, ok := bearer(r)
			if !ok && r.Header.Get("apikey") != "" {
				// The key is not even looked up: this is not an oracle.
				writeError(w, r, &apiError{Status: http.StatusForbidden, Type: typePermission, Code: "api_key_not_allowed",
					Message: "API keys cannot call dashboard endpoints; log in and send Authorization: Bearer <token>"})
				return
			}
			if !ok {
				writeError(w, r, &apiError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "token_missing",
					Message: "send the dashboard token in the Authorization header: Bearer <token>"})
				return
			}
			u, err := auth.Verify(r.Context(), token)
			if err != nil {
				writeError(w, r, err)
				return
			}
			if h, ok := r.Context().Value(ctxKeyRecord).(*keyHolder); ok {
				h.user = &u
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxDashKey{}, u)))
		})
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// RateLimitSource names the per-account request limit.
type RateLimitSource interface {
	RateLimit(ctx context.Context, accountID string) (ports.RateLimit, error)
}

// APIKeyAuth is the middleware of every apikey route: authentication
// (missing or invalid key → 401) and the per-key rate limit (→ 429). It is
// exported for benchmarks and for embedders that mount their own routes.
func APIKeyAuth(d Deps) mux.MiddlewareFunc {
	lim := newLimiter(d.RateLimits, d.Limiter)
	auth := requireAPIKey(d.Accounts, newAuthFailures(d.AuthFailures))
	return func(next http.Handler) http.Handler {
		return lim.prefetch(auth(lim.enforce(next)))
	}
}

// keyLimiter applies the per-key GCRA limit. Its two halves wrap
// requireAPIKey: prefetch starts the limiter call (a Redis round trip)
// concurrently with the key lookup (a database round trip) when it already
// knows the key's account from an earlier request, and enforce, after the
// key is authenticated, waits for that answer or asks on the spot. A key
// that fails authentication gets its 401 whatever the limiter says.
//
// Anything that keeps the limiter from deciding (settings or Redis errors)
// lets the request through: the limiter protects the service, it must
// never fail it.
type keyLimiter struct {
	src     RateLimitSource
	limiter ports.RateLimiter

	mu sync.Mutex
	// accounts maps the fingerprint of an authenticated key to its
	// account: only a hint of which limit to apply, never a credential.
	accounts map[string]string
}

type limitAnswer struct {
	limit ports.RateLimit
	d     ports.RateDecision
	err   error
}

type limitFuture struct {
	accountID string
	ch        chan limitAnswer
}

type ctxLimitKey struct{}

func newLimiter(src RateLimitSource, l ports.RateLimiter) *keyLimiter {
	return &keyLimiter{src: src, limiter: l, accounts: map[string]string{}}
}

// accountLimitFactor scales a key's limit into its account's: keys share
// the account budget, so minting keys cannot multiply it (issue 11, item
// 16), while a few keys still each get their full rate.
const accountLimitFactor = 4

func (l *keyLimiter) ask(ctx context.Context, accountID, fingerprint string) limitAnswer {
	limit, err := l.src.RateLimit(ctx, accountID)
	if err != nil {
		return limitAnswer{err: err}
	}
	d, err := l.limiter.Allow(ctx, fingerprint, limit)
	if err != nil || !d.Allowed {
		return limitAnswer{limit: limit, d: d, err: err}
	}
	acct := ports.RateLimit{Rate: limit.Rate * accountLimitFactor, Burst: limit.Burst * accountLimitFactor, Period: limit.Period}
	ad, err := l.limiter.Allow(ctx, "acct:"+accountID, acct)
	if err != nil {
		return limitAnswer{limit: limit, d: d}
	}
	if !ad.Allowed {
		d = ports.RateDecision{RetryAfter: ad.RetryAfter, ResetAfter: max(d.ResetAfter, ad.ResetAfter)}
	}
	return limitAnswer{limit: limit, d: d}
}

func (l *keyLimiter) prefetch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("apikey")
		if l.src == nil || l.limiter == nil || key == "" {
			next.ServeHTTP(w, r)
			return
		}
		fp := domain.APIKeyFingerprint(key)
		l.mu.Lock()
		acct, ok := l.accounts[fp]
		l.mu.Unlock()
		if ok {
			f := &limitFuture{accountID: acct, ch: make(chan limitAnswer, 1)}
			ctx := r.Context()
			go func() { f.ch <- l.ask(ctx, acct, fp) }()
			r = r.WithContext(context.WithValue(ctx, ctxLimitKey{}, f))
		}
		next.ServeHTTP(w, r)
	})
}

func (l *keyLimiter) enforce(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := callerFrom(r.Context())
		if l.src == nil || l.limiter == nil || caller.KeyFingerprint == "" {
			next.ServeHTTP(w, r)
			return
		}
		var ans limitAnswer
		if f, ok := r.Context().Value(ctxLimitKey{}).(*limitFuture); ok && f.accountID == caller.Account.ID {
			ans = <-f.ch
		} else {
			ans = l.ask(r.Context(), caller.Account.ID, caller.KeyFingerprint)
			l.mu.Lock()
			if len(l.accounts) >= 100_000 {
				clear(l.accounts)
			}
			l.accounts[caller.KeyFingerprint] = caller.Account.ID
			l.mu.Unlock()
		}
		if ans.err != nil {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("RateLimit-Limit", strconv.Itoa(ans.limit.Burst))
		h.Set("RateLimit-Remaining", strconv.Itoa(max(ans.d.Remaining, 0)))
		h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(ans.d.ResetAfter)))
		if !ans.d.Allowed {
			writeError(w, r, &app.ThrottledError{RetryAfter: ans.d.RetryAfter})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ceilSeconds rounds up to whole seconds, at least 1 for any wait.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// AuthController serves dashboard login and logout.
type AuthController struct {
	sessions *app.SessionService
}

// Routes registers /auth/login (open) on r and /auth/logout on authed.
func (c *AuthController) Routes(r, authed *mux.Router) {
	r.HandleFunc("/auth/login", c.login).Methods(http.MethodPost).Name("auth.login")
	authed.HandleFunc("/auth/logout", c.logout).Methods(http.MethodPost).Name("auth.logout")
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func (c *AuthController) login(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if _, err := readJSON(w, r, false, &req); err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case req.Email == "":
		writeError(w, r, badRequest("email", "parameter_missing", "email is required"))
		return
	case req.Password == "":
		writeError(w, r, badRequest("password", "parameter_missing", "password is required"))
		return
	}
	s, err := c.sessions.Login(r.Context(), req.Email, req.Password, clientIP(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (c *AuthController) logout(w http.ResponseWriter, r *http.Request) {
	if err := c.sessions.Logout(r.Context(), dashboardUser(r.Context())); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// APIKeysController serves /api-keys for the dashboard.
type APIKeysController struct {
	keys *app.KeyService
}

// Routes registers the key routes (under requireDashboard).
func (c *APIKeysController) Routes(r *mux.Router) {
	r.HandleFunc("/api-keys", c.issue).Methods(http.MethodPost).Name("api_keys.issue")
	r.HandleFunc("/api-keys", c.list).Methods(http.MethodGet).Name("api_keys.list")
	r.HandleFunc("/api-keys/{id}/rotate", c.rotate).Methods(http.MethodPost).Name("api_keys.rotate")
	r.HandleFunc("/api-keys/{id}", c.revoke).Methods(http.MethodDelete).Name("api_keys.revoke")
	r.HandleFunc("/audit-logs", c.auditLogs).Methods(http.MethodGet).Name("audit_logs.list")
	r.HandleFunc("/request-logs", c.requestLogs).Methods(http.MethodGet).Name("request_logs.list")
}

type issuedKeyJSON struct {
	ID          string           `json:"id"`
	APIKey      string           `json:"apiKey"`
	Fingerprint string           `json:"fingerprint"`
	Prefix      string           `json:"prefix"`
	Label       string           `json:"label"`
	CreatedAt   domain.Timestamp `json:"createdAt"`
}

func issuedJSON(k app.IssuedKey) issuedKeyJSON {
	return issuedKeyJSON{ID: k.ID, APIKey: k.APIKey, Fingerprint: k.Fingerprint, Prefix: k.Prefix, Label: k.Label, CreatedAt: domain.Timestamp(k.CreatedAt)}
}

type issueKeyRequest struct {
	Label string `json:"label"`
	Test  bool   `json:"test"`
}

type rotateKeyRequest struct {
	Label *string `json:"label"`
}

// optionalBody decodes a body that may be absent.
func optionalBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r, false)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	return decodeStrict(body, v)
}

func (c *APIKeysController) issue(w http.ResponseWriter, r *http.Request) {
	var req issueKeyRequest
	if err := optionalBody(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	k, err := c.keys.Issue(r.Context(), dashboardUser(r.Context()), req.Label, req.Test)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, issuedJSON(k))
}

type keyMetaJSON struct {
	ID        string           `json:"id"`
	Prefix    string           `json:"prefix"`
	Label     string           `json:"label"`
	CreatedAt domain.Timestamp `json:"createdAt"`
}

func (c *APIKeysController) list(w http.ResponseWriter, r *http.Request) {
	ks, err := c.keys.List(r.Context(), dashboardUser(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]keyMetaJSON, len(ks))
	for i, k := range ks {
		out[i] = keyMetaJSON{ID: k.ID, Prefix: k.Prefix, Label: k.Label, CreatedAt: domain.Timestamp(k.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
}

func (c *APIKeysController) rotate(w http.ResponseWriter, r *http.Request) {
	var req rotateKeyRequest
	if err := optionalBody(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	k, err := c.keys.Rotate(r.Context(), dashboardUser(r.Context()), mux.Vars(r)["id"], req.Label)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, issuedJSON(k))
}

func (c *APIKeysController) revoke(w http.ResponseWriter, r *http.Request) {
	if err := c.keys.Revoke(r.Context(), dashboardUser(r.Context()), mux.Vars(r)["id"]); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"revoked": true})
}

// queryLimit reads ?limit= (1..100, default def).
func queryLimit(r *http.Request, def int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100 {
		return 0, badRequest("limit", "parameter_invalid", "limit must be an integer from 1 to 100")
	}
	return n, nil
}

type auditJSON struct {
	ID             string           `json:"id"`
	Action         string           `json:"action"`
	UserID         string           `json:"userId,omitempty"`
	KeyID          string           `json:"keyId,omitempty"`
	KeyFingerprint string           `json:"keyFingerprint,omitempty"`
	Code           string           `json:"code,omitempty"`
	CreatedAt      domain.Timestamp `json:"createdAt"`
}

func (c *APIKeysController) auditLogs(w http.ResponseWriter, r *http.Request) {
	limit, err := queryLimit(r, 50)
	if err != nil {
		writeError(w, r, err)
		return
	}
	es, err := c.keys.AuditLogs(r.Context(), dashboardUser(r.Context()), limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]auditJSON, len(es))
	for i, e := range es {
		out[i] = auditJSON{ID: e.ID, Action: e.Action, UserID: e.UserID, KeyID: e.KeyID, KeyFingerprint: e.KeyFingerprint,
			Code: e.Code, CreatedAt: domain.Timestamp(e.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
}

type requestLogJSON struct {
	RequestID         string           `json:"requestId"`
	Method            string           `json:"method"`
	Path              string           `json:"path"`
	Status            int              `json:"status"`
	DurationMs        float64          `json:"durationMs"`
	APIKeyFingerprint string           `json:"apiKeyFingerprint"`
	Mode              string           `json:"mode"`
	CreatedAt         domain.Timestamp `json:"createdAt"`
}

func (c *APIKeysController) requestLogs(w http.ResponseWriter, r *http.Request) {
	limit, err := queryLimit(r, 25)
	if err != nil {
		writeError(w, r, err)
		return
	}
	fp := r.URL.Query().Get("apiKeyFingerprint")
	if fp != "" && !isHexSHA256(fp) {
		writeError(w, r, badRequest("apiKeyFingerprint", "parameter_invalid", "apiKeyFingerprint must be 64 lowercase hex characters"))
		return
	}
	es, err := c.keys.RequestLogs(r.Context(), dashboardUser(r.Context()), fp, limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]requestLogJSON, len(es))
	for i, e := range es {
		out[i] = requestLogJSON{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status,
			DurationMs: float64(e.Duration.Microseconds()) / 1000, APIKeyFingerprint: e.KeyFingerprint, Mode: e.Mode,
			CreatedAt: domain.Timestamp(e.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// dashboardRoutes mounts the dashboard routes ahead of the apikey-guarded
// /v1 subrouter: login is open; everything else needs the Bearer token.
func dashboardRoutes(r *mux.Router, d Deps) {
	if d.Sessions == nil {
		return
	}
	open := r.PathPrefix("/v1").Subrouter()
	authed := r.PathPrefix("/v1").Subrouter()
	authed.Use(requireDashboard(d.Sessions))
	(&AuthController{sessions: d.Sessions}).Routes(open, authed)
	if d.Keys != nil {
		(&APIKeysController{keys: d.Keys}).Routes(authed)
	}
}
