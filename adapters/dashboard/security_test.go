package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/quitatest"
)

// Two-step verification from the security page: the secret is shown as
// text and as a QR code of its otpauth:// URI, a wrong code does not turn
// it on, the right one does and shows ten recovery codes once; then the
// login asks for a code after the password, refuses a wrong one, takes a
// right one or a recovery code (once); turning it off needs a code.
func TestTOTPEnableLoginDisable(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Duas Etapas")
	b := newBrowser(t, srv)
	b.login(m)
	sec := b.get("/dashboard/test/security")
	if sec.Status != http.StatusOK || !strings.Contains(sec.Body, `id="totp-begin"`) || !strings.Contains(sec.Body, "Desativada") {
		t.Fatalf("security page before: %d\n%.2000s", sec.Status, sec.Body)
	}
	// A wrong code leaves it off.
	b.post("/dashboard/test/security/totp", url.Values{"csrf": {csrfOf(t, sec.Body)}})
	setup := b.get("/dashboard/test/security/totp")
	if res := b.post("/dashboard/test/security/totp/confirm", url.Values{"csrf": {csrfOf(t, setup.Body)}, "code": {"000000"}}); res.Status != http.StatusSeeOther ||
		res.Location != "/dashboard/test/security/totp?err=code_invalid" {
		t.Fatalf("wrong code: %d %q", res.Status, res.Location)
	}
	if !strings.Contains(b.get("/dashboard/test/security").Body, `id="totp-begin"`) {
		t.Fatal("a wrong code turned it on")
	}
	secret, codes := enableTOTP(t, b)
	sec = b.get("/dashboard/test/security")
	if !strings.Contains(sec.Body, "Ativada") || !strings.Contains(sec.Body, "<strong>10</strong>") || strings.Contains(sec.Body, codes[0]) {
		t.Fatalf("security page after:\n%.3000s", sec.Body)
	}
	// The secret is shown only while it is being set up.
	if res := b.get("/dashboard/test/security/totp/qr.png"); res.Status != http.StatusNotFound {
		t.Errorf("QR after enabling: %d", res.Status)
	}
	if res := b.get("/dashboard/test/security/totp"); res.Status != http.StatusSeeOther || strings.Contains(res.Body, secret) {
		t.Errorf("setup page after enabling: %d", res.Status)
	}

	// Logging in now asks for the code.
	fresh := newBrowser(t, srv)
	first := fresh.loginStart(m, "/dashboard/test/keys")
	if first.Status != http.StatusSeeOther || !strings.HasPrefix(first.Location, "/dashboard/login/code?") {
		t.Fatalf("password step: %d %q", first.Status, first.Location)
	}
	if res := fresh.get("/dashboard/test/keys"); res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Location, "/dashboard/login?") {
		t.Fatalf("the password alone opened the dashboard: %d %q", res.Status, res.Location)
	}
	if res := fresh.submitCode("123456"); res.Status != http.StatusUnauthorized || !strings.Contains(res.Body, `id="login-error"`) {
		t.Fatalf("wrong code: %d", res.Status)
	}
	if res := fresh.submitCode(""); res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("no code: %d", res.Status)
	}
	code := nextCode(t, srv, secret)
	if res := fresh.submitCode(code); res.Status != http.StatusSeeOther || res.Location != "/dashboard/test/keys" {
		t.Fatalf("right code: %d %q\n%.1500s", res.Status, res.Location, res.Body)
	}
	if res := fresh.get("/dashboard/test/keys"); res.Status != http.StatusOK {
		t.Fatalf("after the code: %d", res.Status)
	}
	// The same code does not log in twice.
	replay := newBrowser(t, srv)
	if res := replay.loginWithCode(m, code); res.Status != http.StatusUnauthorized {
		t.Fatalf("the code again: %d", res.Status)
	}
	// A recovery code logs in once.
	rb := newBrowser(t, srv)
	if res := rb.loginWithCode(m, strings.ToUpper(codes[3])); res.Status != http.StatusSeeOther {
		t.Fatalf("recovery code: %d", res.Status)
	}
	if res := newBrowser(t, srv).loginWithCode(m, codes[3]); res.Status != http.StatusUnauthorized {
		t.Fatalf("the recovery code again: %d", res.Status)
	}
	if !strings.Contains(b.get("/dashboard/test/security").Body, "<strong>9</strong>") {
		t.Error("the used recovery code still counts")
	}

	// Turning it off needs a code.
	sec = b.get("/dashboard/test/security")
	if res := b.post("/dashboard/test/security/totp/disable", url.Values{"csrf": {csrfOf(t, sec.Body)}}); res.Location != "/dashboard/test/security?err=code_missing" {
		t.Fatalf("disable without a code: %d %q", res.Status, res.Location)
	}
	if res := b.post("/dashboard/test/security/totp/disable", url.Values{"csrf": {csrfOf(t, sec.Body)}, "code": {"999999"}}); res.Location != "/dashboard/test/security?err=code_invalid" {
		t.Fatalf("disable with a wrong code: %d %q", res.Status, res.Location)
	}
	if res := b.post("/dashboard/test/security/totp/disable", url.Values{"csrf": {csrfOf(t, sec.Body)}, "code": {nextCode(t, srv, secret)}}); res.Location != "/dashboard/test/security?done=totp_disabled" {
		t.Fatalf("disable: %d %q", res.Status, res.Location)
	}
	if res := newBrowser(t, srv).login(m); res.Location != "/dashboard/" {
		t.Fatalf("password-only login after disabling: %q", res.Location)
	}
}

// The second step's refusals: no first step, an expired one, a wrong code
// counted by the login throttle (429 with Retry-After, the right code
// included), and a first step used up by its success.
func TestLoginCodeRefusals(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Recusas")
	b := newBrowser(t, srv)
	b.login(m)
	secret, _ := enableTOTP(t, b)

	nobody := newBrowser(t, srv)
	if res := nobody.get("/dashboard/login/code"); res.Status != http.StatusSeeOther || res.Location != "/dashboard/login" {
		t.Errorf("code page without a first step: %d %q", res.Status, res.Location)
	}
	lp := nobody.get("/dashboard/login")
	if res := nobody.post("/dashboard/login/code", url.Values{"csrf": {csrfOf(t, lp.Body)}, "code": {"123456"}}); res.Status != http.StatusUnauthorized ||
		!strings.Contains(res.Body, "O tempo para digitar o código acabou") {
		t.Errorf("code without a first step: %d", res.Status)
	}

	late := newBrowser(t, srv)
	late.loginStart(m, "/dashboard/")
	page := late.get("/dashboard/login/code")
	srv.Clock.(*quitatest.Clock).Advance(6 * time.Minute)
	res := late.post("/dashboard/login/code", url.Values{"csrf": {csrfOf(t, page.Body)}, "code": {nextCode(t, srv, secret)}})
	if res.Status != http.StatusUnauthorized || !strings.Contains(res.Body, `id="email"`) {
		t.Errorf("expired first step: %d", res.Status)
	}

	// The login throttle (5 per e-mail and address in 15 min) counts the
	// password and every code; the late login's password counted too, so
	// the test starts a fresh window.
	srv.Clock.(*quitatest.Clock).Advance(15 * time.Minute)
	guess := newBrowser(t, srv)
	guess.loginStart(m, "/dashboard/") // 1
	for i := range 4 {                 // 2..5
		if res := guess.submitCode("00000" + string(rune('0'+i))); res.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, res.Status)
		}
	}
	res = guess.submitCode(nextCode(t, srv, secret))
	if res.Status != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("the right code past the limit: %d %q", res.Status, res.Header.Get("Retry-After"))
	}
	srv.Clock.(*quitatest.Clock).Advance(15 * time.Minute)
	ok := newBrowser(t, srv)
	ok.loginStart(m, "/dashboard/")
	challenge := ok.cookie("quita_login_challenge")
	if res := ok.submitCode(nextCode(t, srv, secret)); res.Status != http.StatusSeeOther {
		t.Fatalf("after the window: %d", res.Status)
	}
	// The used first step, replayed by another browser, is refused.
	thief := newBrowser(t, srv)
	thief.setCookie("quita_login_challenge", challenge)
	if res := thief.submitCode(nextCode(t, srv, secret)); res.Status != http.StatusUnauthorized || !strings.Contains(res.Body, `id="email"`) {
		t.Fatalf("a used first step: %d", res.Status)
	}
}

// Every new form is refused without the session's (or the login form's)
// CSRF token, or from another origin, and changes nothing.
func TestSecurityFormsNeedCSRF(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Formulários Seguros")
	b := newBrowser(t, srv)
	b.login(m)
	other := newBrowser(t, srv)
	other.login(m)
	sec := b.get("/dashboard/test/security")
	sid := sessionIDs(sec.Body)
	if len(sid) != 2 {
		t.Fatalf("sessions listed: %v", sid)
	}
	otherToken := csrfOf(t, other.get("/dashboard/test/security").Body)
	for _, path := range []string{"/dashboard/test/security/totp", "/dashboard/test/security/totp/confirm", "/dashboard/test/security/totp/disable",
		"/dashboard/test/security/sessions/end-others", "/dashboard/test/security/sessions/" + sid[0] + "/revoke",
		"/dashboard/test/security/sessions/" + sid[1] + "/revoke"} {
		for name, form := range map[string]url.Values{
			"no token":          {"code": {"123456"}},
			"another session's": {"code": {"123456"}, "csrf": {otherToken}},
		} {
			if res := b.post(path, form); res.Status != http.StatusForbidden {
				t.Errorf("%s %s: %d, want 403", path, name, res.Status)
			}
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(url.Values{"csrf": {csrfOf(t, sec.Body)}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		if res := b.do(req); res.Status != http.StatusForbidden {
			t.Errorf("%s from another origin: %d", path, res.Status)
		}
	}
	after := b.get("/dashboard/test/security")
	if len(sessionIDs(after.Body)) != 2 || !strings.Contains(after.Body, `id="totp-begin"`) {
		t.Fatal("a refused form changed something")
	}
	if res := other.get("/dashboard/test/keys"); res.Status != http.StatusOK {
		t.Fatalf("the other session after refused forms: %d", res.Status)
	}
	// The code form has the login form's double-submit token.
	secret, _ := enableTOTP(t, b)
	c := newBrowser(t, srv)
	c.loginStart(m, "/dashboard/")
	c.get("/dashboard/login/code")
	if res := c.post("/dashboard/login/code", url.Values{"csrf": {"made-up"}, "code": {nextCode(t, srv, secret)}}); res.Status != http.StatusForbidden {
		t.Errorf("code form without its token: %d", res.Status)
	}
}

// The sessions on the security page: each listed with its browser, masked
// address, the current one marked; ending one logs that browser out on
// its next request; "end all other sessions" keeps only the current one;
// ending the current one logs out.
func TestSessionsPage(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Sessões")
	me := newBrowser(t, srv)
	me.agent = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
	me.login(m)
	phone := newBrowser(t, srv)
	phone.agent = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1"
	phone.login(m)
	laptop := newBrowser(t, srv)
	laptop.login(m)
	sec := me.get("/dashboard/test/security")
	ids := sessionIDs(sec.Body)
	for _, want := range []string{"Firefox · Linux", "Safari · iOS", "Go", "127.0.0.x", `id="this-session"`, "Agora"} {
		if !strings.Contains(sec.Body, want) {
			t.Errorf("security page lacks %q", want)
		}
	}
	if len(ids) != 3 || strings.Count(sec.Body, `id="this-session"`) != 1 {
		t.Fatalf("sessions %v", ids)
	}
	if strings.Contains(sec.Body, "127.0.0.1") {
		t.Error("the address is shown in full")
	}
	// End the phone's session.
	phoneID := sessionOfAgent(t, sec.Body, "iPhone")
	if res := me.post("/dashboard/test/security/sessions/"+phoneID+"/revoke", url.Values{"csrf": {csrfOf(t, sec.Body)}}); res.Location != "/dashboard/test/security?done=session_revoked" {
		t.Fatalf("revoke: %d %q", res.Status, res.Location)
	}
	if res := phone.get("/dashboard/test/keys"); res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Location, "/dashboard/login") {
		t.Fatalf("the ended session's next request: %d %q", res.Status, res.Location)
	}
	if res := me.post("/dashboard/test/security/sessions/ses_unknown/revoke", url.Values{"csrf": {csrfOf(t, sec.Body)}}); res.Status != http.StatusNotFound {
		t.Errorf("an unknown session: %d", res.Status)
	}
	if res := me.post("/dashboard/test/security/sessions/end-others", url.Values{"csrf": {csrfOf(t, sec.Body)}}); res.Location != "/dashboard/test/security?done=sessions_ended" {
		t.Fatalf("end others: %d %q", res.Status, res.Location)
	}
	if res := laptop.get("/dashboard/test/keys"); res.Status != http.StatusSeeOther {
		t.Fatalf("another session after end-others: %d", res.Status)
	}
	sec = me.get("/dashboard/test/security")
	if ids := sessionIDs(sec.Body); sec.Status != http.StatusOK || len(ids) != 1 {
		t.Fatalf("after end-others: %d %v", sec.Status, ids)
	}
	// Ending the current session logs out.
	res := me.post("/dashboard/test/security/sessions/"+sessionIDs(sec.Body)[0]+"/revoke", url.Values{"csrf": {csrfOf(t, sec.Body)}})
	if res.Status != http.StatusSeeOther || res.Location != "/dashboard/login" {
		t.Fatalf("ending this session: %d %q", res.Status, res.Location)
	}
	if res := me.get("/dashboard/test/keys"); res.Status != http.StatusSeeOther {
		t.Fatalf("after ending this session: %d", res.Status)
	}
}

// With TOTP on, a live key (issued or rolled) asks for a fresh code; test
// keys do not.
func TestLiveKeyNeedsACode(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Chave Real")
	b := newBrowser(t, srv)
	b.login(m)
	if strings.Contains(b.get("/dashboard/live/keys").Body, `id="key-code"`) {
		t.Fatal("a code field without TOTP")
	}
	secret, _ := enableTOTP(t, b)
	if strings.Contains(b.get("/dashboard/test/keys").Body, `name="code"`) {
		t.Error("test keys ask for a code")
	}
	test := b.get("/dashboard/test/keys")
	if res := b.post("/dashboard/test/keys", url.Values{"csrf": {csrfOf(t, test.Body)}, "label": {"teste"}}); res.Status != http.StatusOK ||
		!strings.Contains(res.Body, "qt_test_") {
		t.Fatalf("a test key: %d", res.Status)
	}
	live := b.get("/dashboard/live/keys")
	if !strings.Contains(live.Body, `id="key-code"`) {
		t.Fatal("no code field for a live key")
	}
	for code, want := range map[string]string{"": "code_missing", "000000": "code_invalid"} {
		res := b.post("/dashboard/live/keys", url.Values{"csrf": {csrfOf(t, live.Body)}, "label": {"real"}, "code": {code}})
		if res.Status != http.StatusSeeOther || res.Location != "/dashboard/live/keys?err="+want {
			t.Errorf("code %q: %d %q", code, res.Status, res.Location)
		}
	}
	res := b.post("/dashboard/live/keys", url.Values{"csrf": {csrfOf(t, live.Body)}, "label": {"real"}, "code": {nextCode(t, srv, secret)}})
	if res.Status != http.StatusOK || !strings.Contains(res.Body, "qt_live_") {
		t.Fatalf("a live key with a code: %d", res.Status)
	}
	id := keyIDRE.FindStringSubmatch(b.get("/dashboard/live/keys").Body)
	if id == nil {
		t.Fatal("no live key listed")
	}
	if res := b.post("/dashboard/live/keys/"+id[1]+"/rotate", url.Values{"csrf": {csrfOf(t, live.Body)}}); res.Location != "/dashboard/live/keys?err=code_missing" {
		t.Fatalf("rotate without a code: %d %q", res.Status, res.Location)
	}
	if res := b.post("/dashboard/live/keys/"+id[1]+"/rotate", url.Values{"csrf": {csrfOf(t, live.Body)}, "code": {nextCode(t, srv, secret)}}); res.Status != http.StatusOK ||
		!strings.Contains(res.Body, "qt_live_") {
		t.Fatalf("rotate with a code: %d", res.Status)
	}
}
