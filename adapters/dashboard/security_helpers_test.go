package dashboard_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	gozxingqr "github.com/makiuchi-d/gozxing/qrcode"

	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/quitatest"
)

var (
	secretRE   = regexp.MustCompile(`id="totp-secret" class="mono" readonly value="([A-Z2-7 ]+)"`)
	recoveryRE = regexp.MustCompile(`<li>([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})</li>`)
)

// nextCode moves the server's clock one TOTP step on and returns the
// code of secret there: each code is accepted once, so every use takes a
// fresh step.
func nextCode(t testing.TB, srv *quitatest.Server, secret string) string {
	t.Helper()
	srv.Clock.(*quitatest.Clock).Advance(30 * time.Second)
	c, err := totp.Codes{}.TOTPCode(secret, srv.Clock.Now().Unix()/30)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enableTOTP turns two-step verification on from the security page of a
// logged-in browser and returns the secret read from the page (checked
// against the QR code) and the recovery codes.
func enableTOTP(t testing.TB, b *browser) (string, []string) {
	t.Helper()
	sec := b.get("/dashboard/test/security")
	if res := b.post("/dashboard/test/security/totp", url.Values{"csrf": {csrfOf(t, sec.Body)}}); res.Status != http.StatusSeeOther ||
		res.Location != "/dashboard/test/security/totp" {
		t.Fatalf("begin: %d %q", res.Status, res.Location)
	}
	setup := b.get("/dashboard/test/security/totp")
	m := secretRE.FindStringSubmatch(setup.Body)
	if setup.Status != http.StatusOK || m == nil {
		t.Fatalf("setup page: %d\n%.2000s", setup.Status, setup.Body)
	}
	secret := strings.ReplaceAll(m[1], " ", "")
	if uri := qrOf(t, b, "/dashboard/test/security/totp/qr.png"); !strings.Contains(uri, "secret="+secret) {
		t.Fatalf("the QR code holds %q, not the secret shown %s", uri, secret)
	}
	res := b.post("/dashboard/test/security/totp/confirm", url.Values{"csrf": {csrfOf(t, setup.Body)}, "code": {nextCode(t, b.srv, secret)}})
	codes := recoveryRE.FindAllStringSubmatch(res.Body, -1)
	if res.Status != http.StatusOK || len(codes) != 10 {
		t.Fatalf("confirm: %d, %d recovery codes\n%.2000s", res.Status, len(codes), res.Body)
	}
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = c[1]
	}
	return secret, out
}

// qrOf fetches a QR image and decodes it.
func qrOf(t testing.TB, b *browser, path string) string {
	t.Helper()
	res := b.get(path)
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("QR %s: %d %q %q", path, res.Status, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
	}
	img, err := png.Decode(bytes.NewReader([]byte(res.Body)))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gozxingqr.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("decode QR: %v", err)
	}
	return r.GetText()
}

// loginWithCode logs in with the password and answers the second step
// with code; it returns the second step's answer.
func (b *browser) loginWithCode(m merchant, code string) answer {
	b.t.Helper()
	first := b.loginStart(m, "/dashboard/test/keys")
	if first.Status != http.StatusSeeOther || first.Location != "/dashboard/login/code?next=%2Fdashboard%2Ftest%2Fkeys" {
		b.t.Fatalf("password step: %d %q", first.Status, first.Location)
	}
	return b.submitCode(code)
}

// loginStart posts the login form with the password.
func (b *browser) loginStart(m merchant, next string) answer {
	b.t.Helper()
	lp := b.get("/dashboard/login")
	return b.post("/dashboard/login", url.Values{"csrf": {csrfOf(b.t, lp.Body)}, "email": {m.Email}, "password": {password}, "next": {next}})
}

// submitCode opens the code page and posts code.
func (b *browser) submitCode(code string) answer {
	b.t.Helper()
	page := b.get("/dashboard/login/code?next=/dashboard/test/keys")
	if page.Status != http.StatusOK {
		b.t.Fatalf("code page: %d %q", page.Status, page.Location)
	}
	return b.post("/dashboard/login/code", url.Values{"csrf": {csrfOf(b.t, page.Body)}, "code": {code}, "next": {"/dashboard/test/keys"}})
}

var (
	sessionRE = regexp.MustCompile(`data-session="(ses_[A-Za-z0-9]+)"`)
	keyIDRE   = regexp.MustCompile(`data-key="(key_[A-Za-z0-9]+)"`)
)

// sessionIDs are the sessions listed on a security page, in order.
func sessionIDs(body string) []string {
	var out []string
	for _, m := range sessionRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// cookie is the browser's cookie of name for the server.
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.srv.URL + "/dashboard/")
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	b.t.Fatalf("no cookie %s", name)
	return ""
}

// setCookie puts a cookie of name in the browser's jar.
func (b *browser) setCookie(name, value string) {
	u, _ := url.Parse(b.srv.URL + "/dashboard/")
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/dashboard"}})
}

// sessionOfAgent is the id of the listed session whose User-Agent holds
// agent.
func sessionOfAgent(t testing.TB, body, agent string) string {
	t.Helper()
	m := regexp.MustCompile(`data-session="(ses_[A-Za-z0-9]+)"[^>]*>\s*<td><span title="[^"]*` + regexp.QuoteMeta(agent)).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no session of %s listed", agent)
	}
	return m[1]
}
