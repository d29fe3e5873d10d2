package checkout_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
	"github.com/quitapix/quita/quitatest"
)

// The whole payer journey in a real browser: open the checkout, read the
// BR Code, copy it, pay through the test helper and watch the page turn
// to paid without a reload.
func TestBrowserPayerJourney(t *testing.T) {
	t.Parallel()
	bctx := browserContext(t)
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Padaria Pão de Mel")
	ch := createCharge(t, srv, acct.TestKey, map[string]any{
		"amount": 123456, "payment_method": "pix", "expires_in": 1800,
		"description": "Encomenda: bolo de cenoura com cobertura e 12 pães de queijo",
	})
	origin := srv.URL
	for _, perm := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(bctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: perm, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted,
			Origin:     origin,
		}); err != nil {
			t.Fatalf("grant %s: %v", perm, err)
		}
	}

	ctx, console := tab(t, bctx, 390, 844)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(ch.CheckoutURL),
		chromedp.WaitVisible(chromedp.ID("brcode")),
	); err != nil {
		t.Fatal(err)
	}
	// A marker that a reload would wipe.
	evalString(t, ctx, `window.__noReload = 'still here'`)

	shown, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("brcode")))
	if err != nil {
		t.Fatal(err)
	}
	if shown != ch.Pix.BRCode {
		t.Errorf("BR Code on the page\n %q\nwant the charge's pix.br_code\n %q", shown, ch.Pix.BRCode)
	}
	if got := evalString(t, ctx, `document.querySelector('.amount').textContent`); got != "R$ 1.234,56" {
		t.Errorf("amount %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector('.merchant-name').textContent`); got != "Padaria Pão de Mel" {
		t.Errorf("merchant %q", got)
	}

	// The QR image the page shows: loaded (CSP allows it) and decoding to
	// exactly the BR Code.
	src := evalString(t, ctx, `document.getElementById('qr').currentSrc`)
	if src != ch.Pix.QRCodeURL {
		t.Errorf("QR src %q, want the charge's qr_code_url %q", src, ch.Pix.QRCodeURL)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('qr').complete && document.getElementById('qr').naturalWidth > 0`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("the QR image did not load in the browser: %v", err)
	}
	res, err := http.Get(src)
	if err != nil {
		t.Fatal(err)
	}
	qrPNG, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if got := decodeQR(t, qrPNG); got != ch.Pix.BRCode {
		t.Errorf("QR decodes to\n %q\nwant the charge's pix.br_code\n %q", got, ch.Pix.BRCode)
	}
	if alt := evalString(t, ctx, `document.getElementById('qr').alt`); !strings.Contains(alt, "R$ 1.234,56") {
		t.Errorf("QR alt text %q", alt)
	}

	// The countdown runs.
	first := evalString(t, ctx, `document.getElementById('countdown').textContent`)
	if !strings.HasPrefix(first, "29:") && !strings.HasPrefix(first, "30:") {
		t.Errorf("countdown %q, want about 30 minutes", first)
	}
	screenshot(t, ctx, "pending")

	// Copy: feedback on the button and in the live region, and the
	// clipboard holds the code.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("copy"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('copy').classList.contains('copied')`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("no copy feedback: %v (feedback %q)", err, evalString(t, ctx, `document.getElementById('copy-feedback').textContent`))
	}
	if got := evalString(t, ctx, `document.getElementById('copy-label').textContent`); got != "Código copiado!" {
		t.Errorf("button after copy says %q", got)
	}
	if got := evalString(t, ctx, `document.getElementById('copy-feedback').textContent`); !strings.Contains(got, "copiado") {
		t.Errorf("live feedback %q", got)
	}
	clip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Errorf("read clipboard: %v", err)
	} else if clip != ch.Pix.BRCode {
		t.Errorf("clipboard holds %q, want the BR Code", clip)
	}
	screenshot(t, ctx, "copied")

	// Pay; the page polls and switches by itself.
	payCharge(t, srv, acct.TestKey, ch.ID, nil)
	waitState(t, ctx, "paid")
	if got := evalString(t, ctx, `String(window.__noReload)`); got != "still here" {
		t.Errorf("the page reloaded to show the payment (marker %q)", got)
	}
	if hidden := evalString(t, ctx, `String(document.querySelector('[data-state="pending"]').hidden)`); hidden != "true" {
		t.Error("the payment panel is still shown after payment")
	}
	if got := evalString(t, ctx, `document.getElementById('announce').textContent`); got != "Pagamento confirmado" {
		t.Errorf("live region announced %q", got)
	}
	if got := evalString(t, ctx, `document.title`); !strings.HasPrefix(got, "Pagamento confirmado") {
		t.Errorf("title %q", got)
	}
	screenshot(t, ctx, "paid")
	console.check(t)
}

// Expired charges: one opened after it expired, and one that expires while
// the payer looks at it (the server clock moves; the page follows).
func TestBrowserExpiredStates(t *testing.T) {
	t.Parallel()
	bctx := browserContext(t)
	clock := quitatest.NewClock()
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock})
	acct := srv.NewAccount(t, "Sorveteria Polar")

	gone := createCharge(t, srv, acct.TestKey, map[string]any{"amount": 1990, "payment_method": "pix", "description": "Pote de 1 litro"})
	expireCharge(t, srv, acct.TestKey, gone.ID)
	ctx, console := tab(t, bctx, 390, 844)
	if err := chromedp.Do(ctx, chromedp.Navigate(gone.CheckoutURL)); err != nil {
		t.Fatal(err)
	}
	waitState(t, ctx, "expired")
	if n := evalString(t, ctx, `String(document.querySelectorAll('section[data-state]:not([hidden])').length)`); n != "1" {
		t.Errorf("%s sections shown, want only expired", n)
	}
	screenshot(t, ctx, "expired")
	console.check(t)

	live := createCharge(t, srv, acct.TestKey, map[string]any{"amount": 990, "payment_method": "pix", "expires_in": 300})
	ctx2, console2 := tab(t, bctx, 390, 844)
	if err := chromedp.Do(ctx2, chromedp.Navigate(live.CheckoutURL), chromedp.WaitVisible(chromedp.ID("brcode"))); err != nil {
		t.Fatal(err)
	}
	if urgent := evalString(t, ctx2, `String(document.getElementById('countdown-box').classList.contains('urgent'))`); urgent != "true" {
		t.Error("the countdown is not marked urgent with 5 minutes left")
	}
	evalString(t, ctx2, `window.__noReload = 'still here'`)
	clock.Advance(10 * time.Minute)
	waitState(t, ctx2, "expired")
	if got := evalString(t, ctx2, `String(window.__noReload)`); got != "still here" {
		t.Error("the page reloaded to show the expiry")
	}
	console2.check(t)
}

// Past expires_at, in the expiry grace: the page hides the ways to pay and
// says a payment made in time is being confirmed, and keeps asking. A Pix
// paid 5 s before expires_at and reported now turns it to paid; without
// one it turns to expired when the grace ends. No reload either way.
func TestBrowserTimeUpAwaitsLatePayment(t *testing.T) {
	t.Parallel()
	bctx := browserContext(t)
	clock := quitatest.NewClock()
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock})
	acct := srv.NewAccount(t, "Quitanda da Esquina")

	open := func(c apiCharge) context.Context {
		t.Helper()
		ctx, console := tab(t, bctx, 390, 844)
		t.Cleanup(func() { console.check(t) })
		if err := chromedp.Do(ctx, chromedp.Navigate(c.CheckoutURL), chromedp.WaitVisible(chromedp.ID("time-up-note"))); err != nil {
			t.Fatal(err)
		}
		if d := evalString(t, ctx, `getComputedStyle(document.getElementById('panel-pix')).display`); d != "none" {
			t.Errorf("the Pix panel is shown (display %s) past expires_at", d)
		}
		if got := evalString(t, ctx, `document.getElementById('checkout').dataset.status`); got != "pending" {
			t.Errorf("page status %q, want pending", got)
		}
		evalString(t, ctx, `window.__noReload = 'still here'`)
		return ctx
	}
	stillHere := func(ctx context.Context) {
		t.Helper()
		if got := evalString(t, ctx, `String(window.__noReload)`); got != "still here" {
			t.Error("the page reloaded")
		}
	}

	paid := createCharge(t, srv, acct.TestKey, map[string]any{"amount": 4590, "payment_method": "pix", "expires_in": 60})
	unpaid := createCharge(t, srv, acct.TestKey, map[string]any{"amount": 990, "payment_method": "pix", "expires_in": 60})
	clock.Advance(61 * time.Second)

	ctx := open(paid)
	screenshot(t, ctx, "time-up")
	expiresAt, err := time.Parse(time.RFC3339Nano, paid.Pix.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := domain.ParseChargeID(paid.ID)
	if _, err := srv.App.Charges.ApplyPixPayment(context.Background(), ports.Scope{AccountID: acct.AccountID, Mode: domain.ModeTest}, raw,
		domain.PixPayment{EndToEndID: "E99999999202611221200latebutok01", Amount: 4590, PaidAt: expiresAt.Add(-5 * time.Second)}); err != nil {
		t.Fatalf("a Pix paid in time, reported in the grace: %v", err)
	}
	waitState(t, ctx, "paid")
	stillHere(ctx)

	ctx2 := open(unpaid)
	clock.Advance(app.DefaultExpiryGrace)
	waitState(t, ctx2, "expired")
	stillHere(ctx2)
}

// The payer-lock outcomes and the 404 page, for their screenshots and to
// see each state switch live.
func TestBrowserOtherStates(t *testing.T) {
	t.Parallel()
	bctx := browserContext(t)
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Livraria Sebo Azul")
	locked := map[string]any{
		"amount": 8990, "payment_method": "pix", "description": "Dom Casmurro, 1ª edição",
		"customer": map[string]any{"name": "Ana Leitora"}, "expected_payer_tax_id": payerCPF,
	}

	for _, tt := range []struct {
		state string
		pay   map[string]any
		lang  string
	}{
		{"refunded", map[string]any{"payer_document": otherCPF}, ""},
		{"processing", nil, ""},
		{"paid", map[string]any{"payer_document": payerCPF}, "en"},
	} {
		ch := createCharge(t, srv, acct.TestKey, locked)
		ctx, console := tab(t, bctx, 390, 844)
		url := ch.CheckoutURL
		if tt.lang != "" {
			url += "?lang=" + tt.lang
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("brcode"))); err != nil {
			t.Fatal(err)
		}
		payCharge(t, srv, acct.TestKey, ch.ID, tt.pay)
		waitState(t, ctx, tt.state)
		name := tt.state
		if tt.lang != "" {
			name += "-" + tt.lang
		}
		screenshot(t, ctx, name)
		console.check(t)
	}

	// A wide screen, in English.
	ch := createCharge(t, srv, acct.TestKey, locked)
	ctx, console := tab(t, bctx, 1280, 860)
	if err := chromedp.Do(ctx, chromedp.Navigate(ch.CheckoutURL+"?lang=en"), chromedp.WaitVisible(chromedp.ID("qr"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('qr').naturalWidth > 0`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "pending-desktop-en")
	console.check(t)

	// A mistyped link. The 404 itself is reported on the console; nothing
	// else may be.
	ctx, console = tab(t, bctx, 390, 844)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/checkout/not-a-charge"), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, `document.querySelector('h1').textContent`); got != "Cobrança não encontrada" {
		t.Errorf("404 heading %q", got)
	}
	screenshot(t, ctx, "not-found")
	console.mu.Lock()
	var rest []string
	for _, m := range console.msgs {
		if !strings.Contains(m, "404") {
			rest = append(rest, m)
		}
	}
	console.mu.Unlock()
	if len(rest) > 0 {
		t.Errorf("browser console on the 404 page: %v", rest)
	}
}
