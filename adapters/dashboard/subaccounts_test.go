package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/quitapix/quita/quitatest"
)

// A platform's Subcontas pages: the empty state that says what to do,
// the create form (CSRF, a refused field shown again with what was
// typed), the list with masked documents and balances of the page's
// mode, a seller's page with its wallet, transfers and charges, a split
// charge's splits on its page, and disable with its confirmation.
func TestSubaccountPages(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Plataforma Delivery")
	b := newBrowser(t, srv)
	b.login(m)
	list := "/dashboard/test/subaccounts"

	empty := b.get(list)
	for _, want := range []string{`id="nav-subaccounts"`, "Nenhuma subconta ainda.", "POST /v1/subaccounts", "convide o vendedor"} {
		if empty.Status != http.StatusOK || !strings.Contains(empty.Body, want) {
			t.Fatalf("empty list: %d, lacks %q", empty.Status, want)
		}
	}
	csrf := csrfOf(t, empty.Body)
	form := url.Values{"name": {"Pizzaria Bella"}, "document": {"529.982.247-25"}, "email": {"bella@example.com"},
		"payout_pix_key": {"bella@example.com"}}

	// Refused without the session's CSRF token: nothing is created.
	other := newMerchant(t, srv, "Outra Plataforma")
	ob := newBrowser(t, srv)
	ob.login(other)
	for name, token := range map[string]string{"no token": "", "another session's": csrfOf(t, ob.get(list).Body)} {
		f := cloneForm(form)
		f.Set("csrf", token)
		if res := b.post(list, f); res.Status != http.StatusForbidden {
			t.Errorf("create with %s: %d, want 403", name, res.Status)
		}
	}
	// A refused field: the form again, with what was typed and why.
	bad := cloneForm(form)
	bad.Set("csrf", csrf)
	bad.Set("document", "529.982.247-26")
	if res := b.post(list, bad); res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Body, "Informe um CPF ou CNPJ válido.") ||
		!strings.Contains(res.Body, `value="Pizzaria Bella"`) {
		t.Fatalf("bad document: %d\n%.2000s", res.Status, res.Body)
	}
	if !strings.Contains(b.get(list).Body, "Nenhuma subconta ainda.") {
		t.Fatal("a refused form created a sub-account")
	}

	form.Set("csrf", csrf)
	res := b.post(list, form)
	loc := regexp.MustCompile(`^/dashboard/test/subaccounts/(acct_[A-Za-z0-9]+)\?done=subaccount_created$`).FindStringSubmatch(res.Location)
	if res.Status != http.StatusSeeOther || loc == nil {
		t.Fatalf("create: %d %q", res.Status, res.Location)
	}
	bella := loc[1]
	page := b.get(res.Location)
	for _, want := range []string{"<h1>Pizzaria Bella</h1>", "Subconta criada.", "***.982.247-**", `id="sa-status">Ativa`,
		"Nenhum repasse ainda", "Nenhuma cobrança da própria subconta", "Ninguém acessa o painel", `id="invite-form"`,
		`id="disable-form"`, `data-confirm="Desativar esta subconta?`, `name="confirm" value="yes" required`} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("new sub-account's page lacks %q", want)
		}
	}

	// A second seller (through the API) and a paid split charge: 3000 to
	// Bella, 12.50 % of the net 9901 (1237) to the second.
	joao := newSeller(t, srv, m.TestKey, "Lanches do João", sellerCNPJ)
	ch := splitCharge(t, srv, m.TestKey, bella, joao.ID, true)
	rows := b.get(list).Body
	for _, want := range []string{"Pizzaria Bella", "Lanches do João", "***.982.247-**", "**.222.333/0001-**", "bella@example.com",
		"R$ 30,00", "R$ 12,37"} {
		if !strings.Contains(rows, want) {
			t.Errorf("list lacks %q", want)
		}
	}
	for _, p := range []string{list, list + "/" + bella, "/dashboard/test/charges/" + ch.ID} {
		if body := b.get(p).Body; strings.Contains(body, sellerCPF) || strings.Contains(body, "529.982.247-25") || strings.Contains(body, sellerCNPJ) {
			t.Errorf("%s shows a seller's document in clear", p)
		}
	}
	detail := b.get(list + "/" + bella).Body
	for _, want := range []string{`id="sa-available">R$ 30,00`, `data-transfer="tr_`, `href="/dashboard/test/charges/` + ch.ID + `"`} {
		if !strings.Contains(detail, want) {
			t.Errorf("Bella's page lacks %q", want)
		}
	}
	// The other mode: the same seller, its live wallet, empty.
	if live := b.get("/dashboard/live/subaccounts/" + bella).Body; !strings.Contains(live, `id="sa-available">R$ 0,00`) || strings.Contains(live, "data-transfer=") {
		t.Error("live mode shows test money")
	}

	// The split charge's page: each split with its seller, share, percent
	// and status, and who bears the fees.
	cp := b.get("/dashboard/test/charges/" + ch.ID).Body
	for _, want := range []string{`id="charge-splits"`, "Tarifas pagas por: plataforma", `href="/dashboard/test/subaccounts/` + bella + `">Pizzaria Bella</a>`,
		"Lanches do João", "R$ 30,00", "R$ 12,37", "12,50%", "Repassado"} {
		if !strings.Contains(cp, want) {
			t.Errorf("split charge's page lacks %q", want)
		}
	}
	open := splitCharge(t, srv, m.TestKey, bella, joao.ID, false)
	if op := b.get("/dashboard/test/charges/" + open.ID).Body; !strings.Contains(op, "definido no pagamento") || !strings.Contains(op, "Pendente") {
		t.Error("an open split charge's page does not show its pending splits")
	}
	if pp := b.get("/dashboard/test/charges/" + paidCharge(t, srv, m.TestKey, 500).ID).Body; strings.Contains(pp, `id="charge-splits"`) {
		t.Error("a charge without splits shows a splits section")
	}

	// Disable: refused without the confirmation, final with it.
	disable := list + "/" + bella + "/disable"
	if res := b.post(disable, url.Values{"csrf": {csrf}}); res.Location != list+"/"+bella+"?err=subaccount_confirm" {
		t.Fatalf("disable without confirmation: %d %q", res.Status, res.Location)
	}
	if s := apiAs[apiSubaccount](t, srv, http.MethodGet, "/subaccounts/"+bella, m.TestKey, nil, http.StatusOK); s.Status != "active" {
		t.Fatalf("disabled without confirmation: %s", s.Status)
	}
	if res := b.post(disable, url.Values{"csrf": {csrf}, "confirm": {"yes"}}); res.Location != list+"/"+bella+"?done=subaccount_disabled" {
		t.Fatalf("disable: %d %q", res.Status, res.Location)
	}
	page = b.get(list + "/" + bella + "?done=subaccount_disabled")
	if !strings.Contains(page.Body, "Subconta desativada.") || !strings.Contains(page.Body, `id="sa-status">Desativada`) ||
		strings.Contains(page.Body, `id="disable-form"`) || strings.Contains(page.Body, `id="invite-form"`) {
		t.Error("the disabled sub-account's page")
	}
	if s := apiAs[apiSubaccount](t, srv, http.MethodGet, "/subaccounts/"+bella, m.TestKey, nil, http.StatusOK); s.Status != "disabled" {
		t.Fatalf("after disable: %s", s.Status)
	}

	// Ids that are not the platform's sub-accounts are the 404 page.
	for _, p := range []string{list + "/not-an-id", list + "/acct_doesnotexist000000000000", list + "?after=acct_doesnotexist000000000000",
		list + "?after=nope"} {
		if res := b.get(p); res.Status != http.StatusNotFound {
			t.Errorf("%s: %d", p, res.Status)
		}
	}
	if res := ob.get(list + "/" + bella); res.Status != http.StatusNotFound || strings.Contains(res.Body, "Pizzaria") {
		t.Errorf("another platform on Bella's page: %d", res.Status)
	}
}

func cloneForm(f url.Values) url.Values {
	out := url.Values{}
	for k, v := range f {
		out[k] = append([]string(nil), v...)
	}
	return out
}
