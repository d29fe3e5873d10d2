package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/quitatest"
)

// Two-step verification in a real browser: the owner opens Segurança,
// turns it on (the QR code loads under the CSP; the test reads the secret
// shown as text and computes the code itself), keeps the recovery codes,
// logs out, logs in again with the password and then a code — a wrong one
// refused on the page, the right one in — and sees the current session
// listed.
// Every page is screenshotted into artifacts/dashboard/.
func TestBrowserTOTPLogin(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Duas Etapas")
	clock := srv.Clock.(*quitatest.Clock)
	code := func(secret string) string {
		t.Helper()
		clock.Advance(30 * time.Second) // each code once: every use takes the next step
		c, err := totp.Codes{}.TOTPCode(secret, clock.Now().Unix()/30)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx, console := browserTab(t)

	do(t, ctx, "open the dashboard", chromedp.Navigate(srv.URL+"/dashboard/"), chromedp.WaitVisible(chromedp.ID("email")))
	do(t, ctx, "log in", chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("balance-available")))
	do(t, ctx, "security page", chromedp.Click(chromedp.ID("nav-security")), chromedp.WaitVisible(chromedp.ID("totp-begin")))
	if got := evalString(t, ctx, `document.querySelector('h1').textContent + ' / ' + document.getElementById('totp-status').textContent`); got != "Segurança / Desativada" {
		t.Errorf("security page %q", got)
	}
	screenshot(t, ctx, "sec01-security")

	do(t, ctx, "begin", chromedp.Click(chromedp.ID("totp-begin")), chromedp.WaitVisible(chromedp.ID("totp-qr")))
	// The image loaded (CSP img-src 'self') and is a square QR code.
	do(t, ctx, "QR loaded", chromedp.Poll[chromedp.Void](`document.getElementById('totp-qr').complete && document.getElementById('totp-qr').naturalWidth > 0`))
	if w := evalString(t, ctx, `String(document.getElementById('totp-qr').naturalWidth) + 'x' + document.getElementById('totp-qr').naturalHeight`); w != "320x320" {
		t.Errorf("QR image %s", w)
	}
	shown, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("totp-secret")))
	secret := strings.ReplaceAll(shown, " ", "")
	if err != nil || len(secret) != 32 {
		t.Fatalf("secret shown %q %v", shown, err)
	}
	screenshot(t, ctx, "sec02-totp-setup")
	do(t, ctx, "confirm", chromedp.SendKeys(chromedp.ID("confirm-code"), code(secret)), chromedp.Click(chromedp.ID("totp-confirm")),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")))
	if n := evalString(t, ctx, `String(document.querySelectorAll('#recovery-codes li').length)`); n != "10" {
		t.Errorf("%s recovery codes", n)
	}
	screenshot(t, ctx, "sec03-recovery-codes")
	do(t, ctx, "done", chromedp.Click(chromedp.ID("codes-done")), chromedp.WaitVisible(chromedp.ID("totp-disable")))
	if got := evalString(t, ctx, `document.getElementById('totp-status').textContent`); got != "Ativada" {
		t.Errorf("status %q", got)
	}

	do(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("email")))
	do(t, ctx, "password", chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("code")))
	if loc := location(t, ctx); !strings.Contains(loc, "/dashboard/login/code") {
		t.Fatalf("the password led to %s", loc)
	}
	screenshot(t, ctx, "sec04-login-code")
	do(t, ctx, "wrong code", chromedp.SendKeys(chromedp.ID("code"), "000000"), chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("login-error")))
	console.reset() // the refused code's 401
	do(t, ctx, "right code", chromedp.SetValue(chromedp.ID("code"), code(secret)), chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("balance-available")))
	do(t, ctx, "sessions", chromedp.Click(chromedp.ID("nav-security")), chromedp.WaitVisible(chromedp.ID("this-session")))
	if got := evalString(t, ctx, `document.querySelector('tr.current td').textContent`); !strings.Contains(got, "Chrome") {
		t.Errorf("this session's browser %q", got)
	}
	screenshot(t, ctx, "sec05-sessions")
	console.check(t)
}
