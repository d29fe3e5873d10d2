package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
)

// dashboardRoutes mounts the dashboard routes ahead of the apikey-guarded
// /v1 subrouter: login is open; everything else needs the Bearer token.
func dashboardRoutes(r *mux.Router, d Deps) {
	if d.Sessions == nil {
		return
	}
	open := r.PathPrefix("/v1").Subrouter()
	authed := r.PathPrefix("/v1").Subrouter()
	authed.Use(requireDashboard(d.Sessions), keyedWrites(d.KeyedWrites, dashboardScope, d.Log))
	(&AuthController{sessions: d.Sessions}).Routes(open, authed)
	if d.Keys != nil {
		(&APIKeysController{keys: d.Keys}).Routes(authed)
	}
}

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
			if h := stateOf(r.Context()); h != nil {
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

// AuthController serves dashboard login and logout.
type AuthController struct {
	sessions *app.SessionService
}

// Routes registers /auth/login (open) on r and /auth/logout on authed.
func (c *AuthController) Routes(r, authed *mux.Router) {
	r.HandleFunc("/auth/login", handle(c.login)).Methods(http.MethodPost).Name("auth.login")
	authed.Handle("/auth/logout", ownsKey(c.logout)).Methods(http.MethodPost).Name("auth.logout")
	authed.HandleFunc("/auth/logout_all", c.logoutAll).Methods(http.MethodPost).Name("auth.logout_all")
}

// loginRequest: code is a TOTP or recovery code, for a user with TOTP.
type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Code     string `json:"code"`
}

func (c *AuthController) login(w http.ResponseWriter, r *http.Request) (any, error) {
	var req loginRequest
	if _, err := readJSON(w, r, false, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Email == "":
		return nil, badRequest("email", "parameter_missing", "email is required")
	case req.Password == "":
		return nil, badRequest("password", "parameter_missing", "password is required")
	}
	s, err := c.sessions.SignIn(r.Context(), app.LoginRequest{Email: req.Email, Password: req.Password, Code: req.Code,
		Client: clientIP(r.Context()), UserAgent: r.UserAgent()})
	// The API logs in in one step: a missing or wrong code fails the
	// login itself.
	switch {
	case errors.Is(err, app.ErrSecondFactorRequired):
		return nil, &apiError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "second_factor_required", Param: "code",
			Message: "this login has two-step verification: send the code of the authenticator app (or a recovery code) as code"}
	case errors.Is(err, app.ErrInvalidSecondFactor):
		return nil, &apiError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_second_factor", Param: "code",
			Message: "the code is wrong or was already used; wait for the next one"}
	}
	return s, err
}

// logoutAll ends every session of the user, this one included.
func (c *AuthController) logoutAll(w http.ResponseWriter, r *http.Request) {
	if err := noBody(w, r); err != nil {
		writeError(w, r, err)
		return
	}
	if err := c.sessions.LogoutEverywhere(r.Context(), dashboardUser(r.Context())); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (c *AuthController) logout(w http.ResponseWriter, r *http.Request) {
	if err := noBody(w, r); err != nil {
		writeError(w, r, err)
		return
	}
	if err := c.sessions.Logout(r.Context(), dashboardUser(r.Context())); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
