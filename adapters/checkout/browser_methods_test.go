package checkout_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/quitapix/quita/quitatest"
)

// A payment offering Pix, boleto, crypto and card in a real browser: the
// switcher (keyboard and pointer), the boleto line read and copied (equal
// to the API's boletoLine), the crypto panel, and the sandbox card screen
// approving the payment: back on the checkout the page shows paid.
func TestBrowserMultiMethodJourney(t *testing.T) {
	t.Parallel()
	bctx := browserContext(t)
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Empório Bom Preço")
	p, ch := createPayment(t, srv, acct.TestKey, map[string]any{
		"amount": 123456, "currency": "BRL", "paymentMethods": []string{"PIX", "BOLETO", "CRYPTO", "CREDIT_CARD"},
		"customerDocument": payerCPF, "metadata": map[string]any{"description": "Cesta de natal"},
	})
	if p.BoletoLine == nil || p.CryptoAddress == nil {
		t.Fatalf("method data not filled: %+v", p)
	}
	for _, perm := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(bctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: perm, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted,
			Origin:     srv.URL,
		}); err != nil {
			t.Fatalf("grant %s: %v", perm, err)
		}
	}
	visible := func(ctx context.Context, id string) bool {
		return evalString(t, ctx, `String(document.getElementById('`+id+`').checkVisibility())`) == "true"
	}

	ctx, console := tab(t, bctx, 390, 844)
	if err := chromedp.Do(ctx, chromedp.Navigate(ch.CheckoutURL), chromedp.WaitVisible(chromedp.ID("brcode"))); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"boleto-line", "crypto-address", "card-link"} {
		if visible(ctx, id) {
			t.Errorf("%s is shown while Pix is chosen", id)
		}
	}
	if got := evalString(t, ctx, `document.querySelector('.methods legend').textContent`); got != "Como você quer pagar?" {
		t.Errorf("switcher legend %q", got)
	}
	screenshot(t, ctx, "multi-pix")

	// Keyboard: the arrow key moves from Pix to boleto, as in any radio group.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.ID("m-pix")), chromedp.KeyEvent(kb.ArrowRight),
		chromedp.WaitVisible(chromedp.ID("boleto-line"))); err != nil {
		t.Fatal(err)
	}
	if visible(ctx, "brcode") {
		t.Error("the Pix code is still shown after choosing boleto")
	}
	if got := evalString(t, ctx, `location.hash`); got != "#boleto" {
		t.Errorf("the chosen method is not kept in the address: %q", got)
	}
	line, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("boleto-line")))
	if err != nil {
		t.Fatal(err)
	}
	if line != *p.BoletoLine {
		t.Errorf("boleto line on the page %q, want the API's boletoLine %q", line, *p.BoletoLine)
	}
	if got := evalString(t, ctx, `document.getElementById('boleto-barcode').textContent`); got != *p.BoletoBarcode {
		t.Errorf("barcode %q, want %q", got, *p.BoletoBarcode)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("copy-boleto"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('copy-boleto').classList.contains('copied')`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("no copy feedback on the boleto button: %v", err)
	}
	if got := evalString(t, ctx, `document.getElementById('boleto-feedback').textContent`); got != "Linha copiada!" {
		t.Errorf("boleto copy feedback %q", got)
	}
	clip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Errorf("read clipboard: %v", err)
	} else if clip != *p.BoletoLine {
		t.Errorf("clipboard holds %q, want the boletoLine %q", clip, *p.BoletoLine)
	}
	screenshot(t, ctx, "multi-boleto")

	// Pointer: crypto.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`label:has(#m-crypto)`)), chromedp.WaitVisible(chromedp.ID("crypto-address"))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, `document.getElementById('crypto-address').value`); got != *p.CryptoAddress {
		t.Errorf("crypto address %q, want %q", got, *p.CryptoAddress)
	}
	if got := evalString(t, ctx, `document.getElementById('crypto-amount').textContent`); got != *p.CryptoAmount+" "+*p.CryptoCurrency {
		t.Errorf("crypto amount %q", got)
	}
	screenshot(t, ctx, "multi-crypto")

	// Card: the sandbox card screen, approve, back to the page: paid.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`label:has(#m-card)`)), chromedp.WaitVisible(chromedp.ID("card-link"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "multi-card")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("card-link")), chromedp.WaitVisible(chromedp.ID("card-approve"))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, `location.pathname`); !strings.HasSuffix(got, "/card") {
		t.Errorf("card screen at %q", got)
	}
	screenshot(t, ctx, "card-screen")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("card-approve"))); err != nil {
		t.Fatal(err)
	}
	waitState(t, ctx, "paid")
	if got := evalString(t, ctx, `document.querySelector('[data-state="paid"] p').textContent`); !strings.Contains(got, "Recebemos o seu pagamento") {
		t.Errorf("paid text %q", got)
	}
	screenshot(t, ctx, "multi-paid")
	var got struct {
		Status   string `json:"status"`
		PaidWith string `json:"paidWith"`
	}
	doJSON(t, http.MethodGet, srv.BaseURL+"/payments/"+p.ID, acct.TestKey, nil, &got, http.StatusOK)
	if got.Status != "APPROVED" || got.PaidWith != "CREDIT_CARD" {
		t.Errorf("the API reads %+v after approval on the card screen", got)
	}
	console.check(t)

	// A euro payment: Multibanco and MB WAY, in English.
	_, eur := createPayment(t, srv, acct.TestKey, map[string]any{
		"amount": 4990, "currency": "EUR", "paymentMethods": []string{"MULTIBANCO", "MBWAY"},
		"metadata": map[string]any{"phone": "+351912345678"},
	})
	ctx2, console2 := tab(t, bctx, 390, 844)
	if err := chromedp.Do(ctx2, chromedp.Navigate(eur.CheckoutURL+"?lang=en"), chromedp.WaitVisible(chromedp.ID("mb-reference"))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx2, `document.getElementById('mb-amount').textContent`); got != "€49.90" {
		t.Errorf("Multibanco amount %q", got)
	}
	screenshot(t, ctx2, "multi-multibanco-en")
	if err := chromedp.Do(ctx2, chromedp.Click(chromedp.CSS(`label:has(#m-mbway)`)), chromedp.WaitVisible(chromedp.ID("mbway-note"))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx2, `document.getElementById('mbway-note').textContent`); !strings.Contains(got, "ending in 678") || strings.Contains(got, "912") {
		t.Errorf("MB WAY note %q", got)
	}
	screenshot(t, ctx2, "multi-mbway-en")
	console2.check(t)
}

// While the acquirer is down the boleto and crypto panels say they are
// preparing; once the data arrives the page loads it by itself, keeping the
// method the payer chose.
func TestBrowserMethodsPreparing(t *testing.T) {
	t.Parallel()
	bctx := browserContext(t)
	clock := quitatest.NewClock()
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock})
	acct := srv.NewAccount(t, "Papelaria Central")
	srv.Sandbox.SetDown(true)
	var created apiPayment
	doJSON(t, http.MethodPost, srv.BaseURL+"/payments", acct.TestKey, map[string]any{
		"amount": 2500, "currency": "BRL", "paymentMethods": []string{"BOLETO", "CRYPTO"}, "idempotencyKey": "checkout-preparing-1",
	}, &created, http.StatusCreated)
	srv.App.Charges.WaitBackground()
	raw := strings.TrimPrefix(created.ID, "tx_")

	ctx, console := tab(t, bctx, 390, 844)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/checkout/"+raw), chromedp.WaitVisible(chromedp.CSS(`#panel-boleto .preparing`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`label:has(#m-crypto)`)), chromedp.WaitVisible(chromedp.CSS(`#panel-crypto .preparing`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "multi-preparing")

	srv.Sandbox.SetDown(false)
	clock.Advance(2 * time.Second)
	if n, err := srv.App.Payments.FinalizePendingMethods(context.Background()); err != nil || n != 1 {
		t.Fatalf("finalise: %d %v", n, err)
	}
	var p apiPayment
	doJSON(t, http.MethodGet, srv.BaseURL+"/payments/"+created.ID, acct.TestKey, nil, &p, http.StatusOK)
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.ID("crypto-address"))); err != nil {
		t.Fatalf("the page did not load the method data: %v", err)
	}
	if got := evalString(t, ctx, `document.getElementById('crypto-address').value`); p.CryptoAddress == nil || got != *p.CryptoAddress {
		t.Errorf("crypto address %q, want %v", got, p.CryptoAddress)
	}
	if got := evalString(t, ctx, `document.querySelector('#m-crypto').checked + ' ' + location.hash`); got != "true #crypto" {
		t.Errorf("the chosen method was lost on reload: %q", got)
	}
	console.check(t)
}
