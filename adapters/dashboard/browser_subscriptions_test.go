package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quitapix/quita/quitatest"
)

// A merchant follows a subscription in a real browser: the list (from
// the login it led to), the status filter, the subscription's page with
// the payer's document masked, a cycle's charge and back, then the
// cancel button with its confirmation; the cancelled page offers no
// button. A pending QR subscription shows its BR Code to paste, in
// English too. Every page is screenshotted into artifacts/dashboard/.
func TestBrowserSubscriptionJourney(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Academia Boa Forma")
	active := activeSub(t, srv, m.TestKey, subTerms("Ana Lima"), 2)
	qrTerms := subTerms("João Souza")
	qrTerms["journey"] = "qr_code"
	qr := createSub(t, srv, m.TestKey, qrTerms)
	ctx, console := browserTab(t)

	list := srv.URL + "/dashboard/test/subscriptions"
	do(t, ctx, "open the subscriptions", chromedp.Navigate(list), chromedp.WaitVisible(chromedp.ID("email")))
	do(t, ctx, "log in", chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.CSS(`tr[data-sub="`+active.ID+`"]`)))
	if got := evalString(t, ctx, `document.querySelector('h1').textContent`); got != "Assinaturas" {
		t.Errorf("list title %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector('nav.side a[aria-current="page"]').textContent`); got != "Assinaturas" {
		t.Errorf("current section %q", got)
	}
	screenshot(t, ctx, "s01-subscriptions")

	do(t, ctx, "filter active", chromedp.SetValue(chromedp.ID("status"), "active"), chromedp.Submit(chromedp.ID("status")),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-sub="`+qr.ID+`"]`)), chromedp.WaitVisible(chromedp.CSS(`tr[data-sub="`+active.ID+`"]`)))
	do(t, ctx, "open the subscription", chromedp.Click(chromedp.CSS(`tr[data-sub="`+active.ID+`"] a`)), chromedp.WaitVisible(chromedp.ID("sub-status")))
	if got := evalString(t, ctx, `document.getElementById('sub-status').textContent + ' ' + document.getElementById('sub-document').textContent`); got != "Ativa *********25" {
		t.Errorf("status and document %q", got)
	}
	noDocument(t, "the subscription page", evalString(t, ctx, `document.documentElement.outerHTML`))
	screenshot(t, ctx, "s02-subscription")

	do(t, ctx, "cycle 2's charge", chromedp.Click(chromedp.CSS(`tr[data-cycle="2"] a`)), chromedp.WaitVisible(chromedp.ID("charge-subscription")))
	if got := evalString(t, ctx, `document.getElementById('charge-subscription').textContent`); !strings.Contains(got, active.ID) || !strings.Contains(got, "ciclo 2") {
		t.Errorf("the charge's link to its subscription %q", got)
	}
	screenshot(t, ctx, "s03-cycle-charge")
	do(t, ctx, "back to the subscription", chromedp.Click(chromedp.CSS(`#charge-subscription a`)), chromedp.WaitVisible(chromedp.ID("cancel-submit")))

	do(t, ctx, "cancel", chromedp.Click(chromedp.ID("cancel-submit")), chromedp.WaitVisible(chromedp.ID("sub-ended")))
	if d := console.confirmed(); len(d) != 1 || !strings.Contains(d[0], "Cancelar esta assinatura?") {
		t.Errorf("confirmations: %q", d)
	}
	if got := evalString(t, ctx, `document.querySelector('.notice.ok').textContent + ' / ' + document.getElementById('sub-status').textContent`); got != "Assinatura cancelada. / Cancelada pelo lojista" {
		t.Errorf("after cancel %q", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll('#cancel-form').length)`); n != "0" {
		t.Error("the cancelled subscription still has its cancel form")
	}
	screenshot(t, ctx, "s04-subscription-cancelled")

	do(t, ctx, "the QR subscription", chromedp.Navigate(srv.URL+"/dashboard/test/subscriptions/"+qr.ID), chromedp.WaitVisible(chromedp.ID("sub-brcode")))
	if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("sub-brcode"))); err != nil || qr.Pix == nil || v != qr.Pix.BRCode {
		t.Errorf("BR Code %q %v", v, err)
	}
	screenshot(t, ctx, "s05-subscription-qr")
	do(t, ctx, "English", chromedp.Click(chromedp.CSS(`a[lang="en"]`)), chromedp.WaitVisible(chromedp.ID("sub-brcode")))
	if got := evalString(t, ctx, `document.querySelector('h1').textContent + ' / ' + document.getElementById('sub-status').textContent`); got != "Subscription / Awaiting authorization" {
		t.Errorf("English page %q", got)
	}
	screenshot(t, ctx, "s06-subscription-qr-en")
	console.check(t)
}
