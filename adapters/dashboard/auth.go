package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quitapix/quita/app"
)

// Cookie names. The session cookie holds the dashboard JWT; the login
// cookie is the double-submit CSRF token of the login forms; the language
// cookie remembers pt-BR or en.
//
// The challenge cookie holds a login's first step while the second (the
// TOTP code) is asked, for at most app.ChallengeTTL.
const (
	sessionCookie   = "quita_session"
	loginCookie     = "quita_login_csrf"
	challengeCookie = "quita_login_challenge"
	langCookie      = "quita_lang"
)

// csrfField is the form field every POST carries.
const csrfField = "csrf"

func (c *Controller) secure(r *http.Request) bool { return c.cfg.SecureCookies || r.TLS != nil }

// hostPrefix makes a secure cookie a host-only one: a browser keeps a
// cookie named __Host-… only when it is Secure, has Path=/ and no Domain,
// so neither a sibling subdomain nor a plain-http page of the host can set
// or shadow it. Over plain http (local development) cookies keep their
// bare names and the dashboard's path.
const hostPrefix = "__Host-"

// cookieName and cookiePath are where a cookie of name lives for r.
func (c *Controller) cookieName(r *http.Request, name string) string {
	if c.secure(r) {
		return hostPrefix + name
	}
	return name
}

func (c *Controller) cookiePath(r *http.Request) string {
	if c.secure(r) {
		return "/"
	}
	return Base
}

// cookie reads the cookie of name that setCookie wrote for r.
func (c *Controller) cookie(r *http.Request, name string) (*http.Cookie, error) {
	return r.Cookie(c.cookieName(r, name))
}

func (c *Controller) setCookie(w http.ResponseWriter, r *http.Request, name, value string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(r, name), Value: value, Path: c.cookiePath(r), Expires: expires,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
}

func (c *Controller) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(r, name), Value: "", Path: c.cookiePath(r), MaxAge: -1,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
}

// csrfToken is bound to the session: an HMAC keyed with the session token,
// which only the browser holding the HttpOnly cookie has. It needs no
// storage and is the same on every process; it dies with the session.
func csrfToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("quita dashboard csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sameOrigin refuses a request whose Origin (sent by browsers with every
// POST) names another site. SameSite=Strict already keeps the cookie off
// cross-site requests; this is the second lock.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	_, host, ok := strings.Cut(o, "://")
	return ok && host == r.Host
}

// Form size limits. The dashboard's largest form (a webhook endpoint: a
// URL of at most 2048 characters and the event catalog) is well under
// maxForm; the login form holds an e-mail, a password and a path.
const (
	maxForm      = 16 << 10
	maxLoginForm = 8 << 10
)

// readForm parses a POST's url-encoded form, reading at most limit bytes
// of body, and answers the request itself when it cannot: 413 for a body
// over limit, 415 for a multipart body (no dashboard form sends one, and
// Go would spool its file parts to disk), 400 for a garbled one. It must
// run before anything reads a field: r.PostFormValue and r.FormValue parse
// the body on first use with Go's own limits (10 MB, and none at all for
// multipart file parts), and once parsed the form is never read again.
func (c *Controller) readForm(w http.ResponseWriter, r *http.Request, limit int64) bool {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
		c.errorPage(w, r, http.StatusUnsupportedMediaType, "err_form_invalid")
		return false
	}
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			c.errorPage(w, r, http.StatusRequestEntityTooLarge, "err_form_too_large")
		} else {
			c.errorPage(w, r, http.StatusBadRequest, "err_form_invalid")
		}
		return false
	}
	return true
}

// csrfOK checks the origin and the form's CSRF token; the form must have
// been read by readForm.
func (c *Controller) csrfOK(r *http.Request, sessionToken string) bool {
	if !sameOrigin(r) {
		return false
	}
	got := r.PostFormValue(csrfField)
	return subtle.ConstantTimeCompare([]byte(got), []byte(csrfToken(sessionToken))) == 1
}

func randomToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

type loginData struct {
	Email string
	Next  string
	Error string
}

func (c *Controller) loginPage(w http.ResponseWriter, r *http.Request) {
	// Already logged in: straight in.
	if ck, err := c.cookie(r, sessionCookie); err == nil {
		if _, err := c.d.Sessions.Verify(r.Context(), ck.Value); err == nil {
			http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
			return
		}
	}
	c.renderLogin(w, r, http.StatusOK, loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

func (c *Controller) renderLogin(w http.ResponseWriter, r *http.Request, status int, d loginData) {
	tok, err := randomToken()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.setCookie(w, r, loginCookie, tok, time.Now().Add(time.Hour))
	v := c.view(r, nil, "login")
	v.CSRF = tok
	v.Data = d
	c.render(w, r, status, v)
}

func (c *Controller) login(w http.ResponseWriter, r *http.Request) {
	if !c.readForm(w, r, maxLoginForm) {
		return
	}
	ck, err := c.cookie(r, loginCookie)
	if err != nil || !sameOrigin(r) ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue(csrfField)), []byte(ck.Value)) != 1 {
		c.forbidden(w, r)
		return
	}
	email, password := strings.TrimSpace(r.PostFormValue("email")), r.PostFormValue("password")
	next := safeNext(r.PostFormValue("next"))
	msgs := c.msgs(r)
	if email == "" || password == "" {
		c.renderLogin(w, r, http.StatusUnprocessableEntity, loginData{Email: email, Next: next, Error: msgs["login_missing"]})
		return
	}
	s, err := c.d.Sessions.SignIn(r.Context(), app.LoginRequest{Email: email, Password: password, Client: c.cfg.ClientIP(r),
		UserAgent: r.UserAgent()})
	var (
		throttled *app.ThrottledError
		second    *app.SecondFactorRequired
	)
	switch {
	case errors.As(err, &second):
		c.setCookie(w, r, challengeCookie, second.Challenge, second.ExpiresAt)
		http.Redirect(w, r, Base+"/login/code?next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", strconv.Itoa(int(throttled.RetryAfter.Round(time.Second).Seconds())))
		c.renderLogin(w, r, http.StatusTooManyRequests, loginData{Email: email, Next: next, Error: msgs["login_throttled"]})
		return
	case errors.Is(err, app.ErrInvalidCredentials):
		c.renderLogin(w, r, http.StatusUnauthorized, loginData{Email: email, Next: next, Error: msgs["login_invalid"]})
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	c.clearCookie(w, r, loginCookie)
	c.clearCookie(w, r, challengeCookie)
	c.setCookie(w, r, sessionCookie, s.Token, time.Time(s.ExpiresAt))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logoutAll ends every session of the user, on every device.
func (c *Controller) logoutAll(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r.Context())
	if err := c.d.Sessions.LogoutEverywhere(r.Context(), s.user); err != nil {
		c.fail(w, r, err)
		return
	}
	c.clearCookie(w, r, sessionCookie)
	http.Redirect(w, r, Base+"/login", http.StatusSeeOther)
}

func (c *Controller) logout(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r.Context())
	if err := c.d.Sessions.Logout(r.Context(), s.user); err != nil {
		c.fail(w, r, err)
		return
	}
	c.clearCookie(w, r, sessionCookie)
	http.Redirect(w, r, Base+"/login", http.StatusSeeOther)
}
