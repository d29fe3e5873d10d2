package dashboard

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quitapix/quita/app"
)

// codeData is the second step of a login: the code form.
type codeData struct {
	Next  string
	Error string
}

// codePage asks for the TOTP code of a login whose password was right;
// without a first step it leads back to the login page.
func (c *Controller) codePage(w http.ResponseWriter, r *http.Request) {
	if _, err := c.cookie(r, challengeCookie); err != nil {
		http.Redirect(w, r, Base+"/login", http.StatusSeeOther)
		return
	}
	c.renderCode(w, r, http.StatusOK, codeData{Next: safeNext(r.URL.Query().Get("next"))})
}

// renderCode renders the code form with a fresh double-submit token, as
// the login form has (no session yet).
func (c *Controller) renderCode(w http.ResponseWriter, r *http.Request, status int, d codeData) {
	tok, err := randomToken()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.setCookie(w, r, loginCookie, tok, time.Now().Add(time.Hour))
	v := c.view(r, nil, "login_code")
	v.Path = Base + "/login"
	v.CSRF = tok
	v.Data = d
	c.render(w, r, status, v)
}

// loginCode is a login's second step: the code, counted by the login's
// own throttles; a right one logs in.
func (c *Controller) loginCode(w http.ResponseWriter, r *http.Request) {
	if !c.readForm(w, r, maxLoginForm) {
		return
	}
	ck, err := c.cookie(r, loginCookie)
	if err != nil || !sameOrigin(r) ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue(csrfField)), []byte(ck.Value)) != 1 {
		c.forbidden(w, r)
		return
	}
	next := safeNext(r.PostFormValue("next"))
	msgs := c.msgs(r)
	challenge, err := c.cookie(r, challengeCookie)
	if err != nil {
		c.renderLogin(w, r, http.StatusUnauthorized, loginData{Next: next, Error: msgs["login_expired"]})
		return
	}
	code := strings.TrimSpace(r.PostFormValue("code"))
	if code == "" {
		c.renderCode(w, r, http.StatusUnprocessableEntity, codeData{Next: next, Error: msgs["login_code_missing"]})
		return
	}
	s, err := c.d.Sessions.CompleteSignIn(r.Context(), challenge.Value, code, c.cfg.ClientIP(r), r.UserAgent())
	var throttled *app.ThrottledError
	switch {
	case errors.Is(err, app.ErrLoginChallenge):
		c.clearCookie(w, r, challengeCookie)
		c.renderLogin(w, r, http.StatusUnauthorized, loginData{Next: next, Error: msgs["login_expired"]})
		return
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", strconv.Itoa(int(throttled.RetryAfter.Round(time.Second).Seconds())))
		c.renderCode(w, r, http.StatusTooManyRequests, codeData{Next: next, Error: msgs["login_throttled"]})
		return
	case errors.Is(err, app.ErrInvalidSecondFactor):
		c.renderCode(w, r, http.StatusUnauthorized, codeData{Next: next, Error: msgs["login_code_invalid"]})
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
