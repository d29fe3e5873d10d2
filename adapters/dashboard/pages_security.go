package dashboard

import (
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ---- security: two-step verification and sessions ----

type securityData struct {
	TOTP     app.TOTPStatus
	Sessions []app.UserSession
}

func securityPage(s *session) string { return modeBase(s) + "/security" }

func (c *Controller) security(w http.ResponseWriter, r *http.Request, s *session) error {
	st, err := c.d.SecondFactor.Status(r.Context(), s.user)
	if err != nil {
		return err
	}
	ss, err := c.d.Sessions.ListSessions(r.Context(), s.user)
	if err != nil {
		return err
	}
	return c.show(w, r, s, "security", securityData{TOTP: st, Sessions: ss})
}

// beginTOTP makes a new secret and goes to the page that shows it.
func (c *Controller) beginTOTP(w http.ResponseWriter, r *http.Request, s *session) error {
	_, err := c.d.SecondFactor.BeginTOTP(r.Context(), s.user)
	if errors.Is(err, app.ErrTOTPEnabled) {
		return back(w, r, securityPage(s), "err", "totp_enabled")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, securityPage(s)+"/totp", http.StatusSeeOther)
	return nil
}

type totpSetupData struct {
	// Secret is shown in groups of four for typing; QR is the image's
	// address.
	Secret string
	Groups string
	QR     string
}

// totpSetup shows the secret being set up: its QR code, the secret to type
// and the form that confirms it with a code.
func (c *Controller) totpSetup(w http.ResponseWriter, r *http.Request, s *session) error {
	setup, err := c.d.SecondFactor.PendingTOTP(r.Context(), s.user)
	switch {
	case errors.Is(err, app.ErrTOTPEnabled):
		return back(w, r, securityPage(s), "err", "totp_enabled")
	case errors.Is(err, app.ErrNoTOTPSetup):
		return back(w, r, securityPage(s), "", "")
	case err != nil:
		return err
	}
	return c.show(w, r, s, "security_totp", totpSetupData{Secret: setup.Secret, Groups: groupsOf4(setup.Secret),
		QR: securityPage(s) + "/totp/qr.png"})
}

func groupsOf4(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(i+4, len(s))])
	}
	return b.String()
}

// totpQR is the QR code of the secret being set up, never cached.
func (c *Controller) totpQR(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r.Context())
	setup, err := c.d.SecondFactor.PendingTOTP(r.Context(), s.user)
	if errors.Is(err, app.ErrTOTPEnabled) || errors.Is(err, app.ErrNoTOTPSetup) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	png, err := c.d.QR.PNG(setup.URI)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	h := w.Header()
	securityHeaders(h)
	h.Set("Content-Type", "image/png")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(png)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(png)
	}
}

type recoveryData struct {
	Codes []string
	Text  string
	Back  string
}

// confirmTOTP turns TOTP on with a code and shows the recovery codes, in
// this answer only.
func (c *Controller) confirmTOTP(w http.ResponseWriter, r *http.Request, s *session) error {
	codes, err := c.d.SecondFactor.ConfirmTOTP(r.Context(), s.user, r.PostFormValue("code"))
	if key := codeError(err); key != "" {
		return back(w, r, securityPage(s)+"/totp", "err", key)
	}
	switch {
	case errors.Is(err, app.ErrTOTPEnabled):
		return back(w, r, securityPage(s), "err", "totp_enabled")
	case errors.Is(err, app.ErrNoTOTPSetup):
		return back(w, r, securityPage(s), "err", "totp_no_setup")
	case err != nil:
		return err
	}
	v := c.view(r, s, "security_codes")
	v.Notice = v.T["done_totp_enabled"]
	v.Data = recoveryData{Codes: codes, Text: strings.Join(codes, "\n"), Back: securityPage(s)}
	c.render(w, r, http.StatusOK, v)
	return nil
}

// codeError is the page's error key for a refused code, "" for any other
// error.
func codeError(err error) string {
	var throttled *app.ThrottledError
	switch {
	case errors.Is(err, app.ErrSecondFactorRequired):
		return "code_missing"
	case errors.Is(err, app.ErrInvalidSecondFactor):
		return "code_invalid"
	case errors.As(err, &throttled):
		return "code_throttled"
	}
	return ""
}

func (c *Controller) disableTOTP(w http.ResponseWriter, r *http.Request, s *session) error {
	err := c.d.SecondFactor.DisableTOTP(r.Context(), s.user, r.PostFormValue("code"))
	if key := codeError(err); key != "" {
		return back(w, r, securityPage(s), "err", key)
	}
	switch {
	case errors.Is(err, app.ErrTOTPNotEnabled):
		return back(w, r, securityPage(s), "err", "totp_not_enabled")
	case err != nil:
		return err
	}
	return back(w, r, securityPage(s), "done", "totp_disabled")
}

// revokeSession ends one of the user's sessions; ending this one logs out.
func (c *Controller) revokeSession(w http.ResponseWriter, r *http.Request, s *session) error {
	id := mux.Vars(r)["id"]
	if !strings.HasPrefix(id, "ses_") {
		return ports.ErrNotFound
	}
	if err := c.d.Sessions.RevokeSession(r.Context(), s.user, id); err != nil {
		return err
	}
	if id == s.user.TokenID {
		c.clearCookie(w, r, sessionCookie)
		http.Redirect(w, r, Base+"/login", http.StatusSeeOther)
		return nil
	}
	return back(w, r, securityPage(s), "done", "session_revoked")
}

func (c *Controller) endOtherSessions(w http.ResponseWriter, r *http.Request, s *session) error {
	if _, err := c.d.Sessions.EndOtherSessions(r.Context(), s.user); err != nil {
		return err
	}
	return back(w, r, securityPage(s), "done", "sessions_ended")
}

// needsCode reports whether a live key asks this user for a code.
func (c *Controller) needsCode(r *http.Request, s *session) (bool, error) {
	if s.mode != domain.ModeLive || c.d.SecondFactor == nil {
		return false, nil
	}
	st, err := c.d.SecondFactor.Status(r.Context(), s.user)
	return st.Enabled, err
}

// ---- the session list's columns ----

// agentName shortens a User-Agent to what a person recognises: the
// browser (or client) and the system, "Firefox · Linux".
func agentName(ua string, lang string) string {
	if ua == "" {
		return messages[lang]["sec_agent_unknown"]
	}
	browser := ""
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chromium/", "Chromium"}, {"HeadlessChrome/", "Chrome"},
		{"Chrome/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"}, {"Go-http-client/", "Go"}, {"quita-go/", "Quita Go SDK"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, o := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iOS"}, {"iPad", "iPadOS"}, {"Windows", "Windows"}, {"Mac OS X", "macOS"},
		{"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			system = o.name
			break
		}
	}
	switch {
	case browser != "" && system != "":
		return browser + " · " + system
	case browser != "":
		return browser
	case system != "":
		return system
	}
	if r := []rune(ua); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return ua
}

// securityFuncs are the security page's template functions.
var securityFuncs = template.FuncMap{"agent": agentName, "seen": sinceSeen}

// sinceSeen is the session's last activity as "now" or its time.
func sinceSeen(t, now time.Time, lang string) string {
	if now.Sub(t) < 2*time.Minute {
		return messages[lang]["sec_seen_now"]
	}
	return when(t, lang)
}
