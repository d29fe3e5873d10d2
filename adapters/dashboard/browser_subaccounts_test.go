package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quitapix/quita/quitatest"
)

// A platform and its seller in a real browser: the platform opens
// Subcontas (empty, saying what to do), creates a seller with the form,
// invites a login from the seller's page and copies the link shown once,
// logs out; the seller opens the link, sets a password and lands in the
// seller's own dashboard (no Subcontas, its own name), where the split
// share it was credited shows; logging out and in again as the seller
// works. Then the platform disables the seller after the confirmation.
// Every page is screenshotted into artifacts/dashboard/.
func TestBrowserSubaccountInvite(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Plataforma Delivery")
	other := newSeller(t, srv, m.TestKey, "Lanches do João", sellerCNPJ)
	ctx, console := browserTab(t)

	do(t, ctx, "open the sub-accounts", chromedp.Navigate(srv.URL+"/dashboard/test/subaccounts"), chromedp.WaitVisible(chromedp.ID("email")))
	do(t, ctx, "log in", chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("subaccount-form")))
	if got := evalString(t, ctx, `document.querySelector('nav.side a[aria-current="page"]').textContent`); got != "Subcontas" {
		t.Errorf("current section %q", got)
	}
	screenshot(t, ctx, "sa01-subaccounts")

	do(t, ctx, "create a seller", chromedp.SendKeys(chromedp.ID("sa-name"), "Pizzaria Bella"),
		chromedp.SendKeys(chromedp.ID("sa-document"), "529.982.247-25"), chromedp.SendKeys(chromedp.ID("sa-email"), "bella@example.com"),
		chromedp.Click(chromedp.ID("subaccount-submit")), chromedp.WaitVisible(chromedp.ID("invite-form")))
	seller := evalString(t, ctx, `document.getElementById('sa-id').textContent`)
	if got := evalString(t, ctx, `document.querySelector('h1').textContent + ' / ' + document.getElementById('sa-document').textContent`); got != "Pizzaria Bella / ***.982.247-**" {
		t.Errorf("seller's page %q", got)
	}
	splitCharge(t, srv, m.TestKey, seller, other.ID, true)
	screenshot(t, ctx, "sa02-subaccount")

	do(t, ctx, "invite", chromedp.SetValue(chromedp.ID("invite-email"), "vendas@pizzaria.example.com"),
		chromedp.Click(chromedp.ID("invite-submit")), chromedp.WaitVisible(chromedp.ID("invite-link")))
	link, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("invite-link")))
	if err != nil || !strings.HasPrefix(link, srv.URL+"/dashboard/invite/") {
		t.Fatalf("invitation link %q %v", link, err)
	}
	screenshot(t, ctx, "sa03-invitation-link")
	do(t, ctx, "back to the seller", chromedp.Click(chromedp.ID("invited-done")), chromedp.WaitVisible(chromedp.ID("sa-invitations")))
	if html := evalString(t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, link) {
		t.Fatal("the seller's page shows the link again")
	}
	do(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("login-submit")))

	// The seller.
	do(t, ctx, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("accept-form")))
	if got := evalString(t, ctx, `document.getElementById('invite-intro').textContent`); !strings.Contains(got, "Pizzaria Bella") || !strings.Contains(got, "Plataforma Delivery") {
		t.Errorf("invitation intro %q", got)
	}
	screenshot(t, ctx, "sa04-accept")
	const pw = "senha-da-pizzaria-1"
	do(t, ctx, "set the password", chromedp.SendKeys(chromedp.ID("password"), pw), chromedp.SendKeys(chromedp.ID("password-confirm"), pw),
		chromedp.Click(chromedp.ID("accept-submit")), chromedp.WaitVisible(chromedp.ID("balance-available")))
	if got := evalString(t, ctx, `document.querySelector('.account').textContent + ' / ' + String(document.querySelectorAll('#nav-subaccounts').length)`); got != "Pizzaria Bella / 0" {
		t.Errorf("the seller's dashboard: %q", got)
	}
	screenshot(t, ctx, "sa05-seller-home")
	do(t, ctx, "test mode", chromedp.Click(chromedp.ID("mode-switch")), chromedp.WaitVisible(chromedp.CSS(".test-banner")))
	if got := evalString(t, ctx, `document.getElementById('balance-available').textContent`); got != "R$ 30,00" {
		t.Errorf("the seller's test balance %q", got)
	}
	screenshot(t, ctx, "sa06-seller-test")
	do(t, ctx, "seller logs out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("login-submit")))
	do(t, ctx, "seller logs in", chromedp.SendKeys(chromedp.ID("email"), "vendas@pizzaria.example.com"), chromedp.SendKeys(chromedp.ID("password"), pw),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("balance-available")))
	do(t, ctx, "the used link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(".big-status")))
	console.reset() // the used link's 410
	do(t, ctx, "seller logs out again", chromedp.Navigate(srv.URL+"/dashboard/live/"), chromedp.WaitVisible(chromedp.ID("logout")),
		chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("login-submit")))

	// The platform disables the seller after the confirmation.
	do(t, ctx, "platform logs in", chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("balance-available")))
	do(t, ctx, "the seller's page", chromedp.Navigate(srv.URL+"/dashboard/test/subaccounts/"+seller), chromedp.WaitVisible(chromedp.ID("disable-form")))
	do(t, ctx, "disable", chromedp.Click(chromedp.ID("disable-confirm")), chromedp.Click(chromedp.ID("disable-submit")),
		chromedp.WaitVisible(chromedp.ID("sa-disabled")))
	if d := console.confirmed(); len(d) != 1 || !strings.Contains(d[0], "Desativar esta subconta?") {
		t.Errorf("confirmations: %q", d)
	}
	screenshot(t, ctx, "sa07-disabled")
	console.check(t)
}
