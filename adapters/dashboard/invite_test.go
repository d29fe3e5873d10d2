package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// A platform invites a login for its seller from the seller's page: the
// link is shown once and logged at info level only; the invitee sets a
// password on the link's page (double-submit CSRF, the passwords must
// match and be long enough) and lands in the sub-account's dashboard,
// which shows its own data only and lets it issue its own API keys. The
// link is then used up; an unknown one is 404, an e-mail that already
// logs in is refused, a sub-account disabled since ends its sessions,
// logins and pending invitations, and an invitation expires after 7 days.
func TestSubaccountInvitations(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	srv := quitatest.NewServer(t, quitatest.Options{Log: logs})
	m := newMerchant(t, srv, "Plataforma Delivery")
	bella := newSeller(t, srv, m.TestKey, "Pizzaria Bella", sellerCPF)
	joao := newSeller(t, srv, m.TestKey, "Lanches do João", sellerCNPJ)
	ch := splitCharge(t, srv, m.TestKey, bella.ID, joao.ID, true)
	b := newBrowser(t, srv)
	b.login(m)
	detail := "/dashboard/test/subaccounts/" + bella.ID
	csrf := csrfOf(t, b.get(detail).Body)

	// The invite form needs the session's CSRF token.
	if res := b.post(detail+"/invitations", url.Values{"email": {"x@example.com"}}); res.Status != http.StatusForbidden {
		t.Errorf("invite without CSRF: %d", res.Status)
	}
	if res := b.post(detail+"/invitations", url.Values{"csrf": {csrf}, "email": {"não é e-mail"}}); res.Location != detail+"?err=invite_email" {
		t.Errorf("invite a bad e-mail: %d %q", res.Status, res.Location)
	}
	sent := b.post(detail+"/invitations", url.Values{"csrf": {csrf}, "email": {"Vendas@Pizzaria.example.com"}})
	if sent.Status != http.StatusOK || sent.Header.Get("Cache-Control") != "no-store" || !strings.Contains(sent.Body, "não será mostrado de novo") {
		t.Fatalf("invite: %d %v", sent.Status, sent.Header)
	}
	link := linkOf(t, sent.Body)
	token := strings.TrimPrefix(link, srv.URL+"/dashboard/invite/")
	if token == link || len(token) != 43 {
		t.Fatalf("link %q", link)
	}
	// Listed without its link, on the page and in the API.
	if page := b.get(detail).Body; !strings.Contains(page, "Convite pendente") || strings.Contains(page, token) {
		t.Error("the seller's page does not list the invitation, or shows its token")
	}
	listed := testkit.Do(t, http.MethodGet, srv.BaseURL+"/subaccounts/"+bella.ID+"/invitations", nil, testkit.Header{"apikey": m.TestKey}).Want(t, 200)
	if body := string(listed.Body); strings.Contains(body, token) || strings.Contains(body, `"url"`) || !strings.Contains(body, `"status":"pending"`) {
		t.Errorf("API list: %s", body)
	}

	// Unknown and malformed tokens.
	for _, p := range []string{"/dashboard/invite/" + strings.Repeat("A", 43), "/dashboard/invite/short"} {
		if res := newBrowser(t, srv).get(p); res.Status != http.StatusNotFound || !strings.Contains(res.Body, "Convite não encontrado") {
			t.Errorf("%s: %d", p, res.Status)
		}
	}

	// The accept page, then the form's refusals.
	inv := newBrowser(t, srv)
	ap := inv.get("/dashboard/invite/" + token)
	for _, want := range []string{"Defina sua senha", `value="Vendas@Pizzaria.example.com"`, "Pizzaria Bella", "Plataforma Delivery"} {
		if ap.Status != http.StatusOK || !strings.Contains(ap.Body, want) {
			t.Fatalf("accept page: %d, lacks %q", ap.Status, want)
		}
	}
	if strings.Contains(ap.Body, "?next=/dashboard/invite") {
		t.Error("the accept page repeats its token in its links")
	}
	late := newBrowser(t, srv) // opens the page now, posts after it was used
	lateCSRF := csrfOf(t, late.get("/dashboard/invite/"+token).Body)
	acsrf := csrfOf(t, ap.Body)
	const pw = "senha-da-pizzaria-1"
	accept := func(br *browser, csrf, p1, p2 string) answer {
		return br.post("/dashboard/invite/"+token, url.Values{"csrf": {csrf}, "password": {p1}, "password_confirm": {p2}})
	}
	if res := accept(newBrowser(t, srv), acsrf, pw, pw); res.Status != http.StatusForbidden {
		t.Errorf("accept without the form's cookie: %d", res.Status)
	}
	if res := accept(inv, acsrf, pw, pw+"x"); res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Body, "As senhas não conferem.") {
		t.Errorf("mismatch: %d", res.Status)
	}
	acsrf = csrfOf(t, inv.get("/dashboard/invite/"+token).Body)
	if res := accept(inv, acsrf, "curta", "curta"); res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Body, "pelo menos 10 caracteres") {
		t.Errorf("short password: %d", res.Status)
	}
	acsrf = csrfOf(t, inv.get("/dashboard/invite/"+token).Body)
	res := accept(inv, acsrf, pw, pw)
	if res.Status != http.StatusSeeOther || res.Location != "/dashboard/live/?done=invite_accepted" {
		t.Fatalf("accept: %d %q\n%.1500s", res.Status, res.Location, res.Body)
	}

	// Used up: the page and a form opened before both refuse it.
	if res := newBrowser(t, srv).get("/dashboard/invite/" + token); res.Status != http.StatusGone || !strings.Contains(res.Body, "já foi usado") {
		t.Errorf("used invitation: %d", res.Status)
	}
	if res := accept(late, lateCSRF, pw, pw); res.Status != http.StatusGone {
		t.Errorf("a form opened before, posted after: %d", res.Status)
	}

	// The sub-account's dashboard: its own data, no Subcontas.
	home := inv.get(res.Location)
	if home.Status != http.StatusOK || !strings.Contains(home.Body, "Acesso criado") || !strings.Contains(home.Body, `title="Conta">Pizzaria Bella`) ||
		strings.Contains(home.Body, "nav-subaccounts") {
		t.Fatalf("the sub-account's home: %d\n%.2000s", home.Status, home.Body)
	}
	if ov := inv.get("/dashboard/test/").Body; !strings.Contains(ov, `id="balance-available">R$ 30,00`) {
		t.Error("the sub-account's overview does not show its split share")
	}
	scsrf := csrfOf(t, home.Body)
	for _, p := range []string{"/dashboard/test/subaccounts", "/dashboard/test/subaccounts/" + bella.ID, "/dashboard/test/subaccounts/" + joao.ID,
		"/dashboard/live/subaccounts", "/dashboard/test/charges/" + ch.ID} {
		if res := inv.get(p); res.Status != http.StatusNotFound || strings.Contains(res.Body, "Lanches") || strings.Contains(res.Body, "Plataforma Delivery") {
			t.Errorf("the sub-account's login on %s: %d", p, res.Status)
		}
	}
	for p, f := range map[string]url.Values{
		"/dashboard/test/subaccounts/" + joao.ID + "/disable":     {"csrf": {scsrf}, "confirm": {"yes"}},
		"/dashboard/test/subaccounts/" + joao.ID + "/invitations": {"csrf": {scsrf}, "email": {"intruso@example.com"}},
		"/dashboard/test/subaccounts":                             {"csrf": {scsrf}, "name": {"Neta"}, "document": {sellerCNPJ}, "email": {"n@example.com"}},
	} {
		if res := inv.post(p, f); res.Status != http.StatusNotFound {
			t.Errorf("the sub-account's login posts %s: %d", p, res.Status)
		}
	}
	if s := apiAs[apiSubaccount](t, srv, http.MethodGet, "/subaccounts/"+joao.ID, m.TestKey, nil, http.StatusOK); s.Status != "active" {
		t.Fatal("the sub-account's login disabled its sibling")
	}
	if cs := inv.get("/dashboard/test/charges").Body; strings.Contains(cs, ch.ID) {
		t.Error("the sub-account's charges list the platform's charge")
	}
	// Its own API key, issued from its dashboard, is the sub-account's.
	issued := inv.post("/dashboard/test/keys", url.Values{"csrf": {scsrf}, "label": {"loja"}})
	key := regexpFind(t, `value="(qt_test_[^"]+)"`, issued.Body)
	own := apiCall(t, srv, http.MethodPost, "/charges", key, map[string]any{"amount": 700, "payment_method": "pix"}, http.StatusCreated)
	testkit.Do(t, http.MethodGet, srv.BaseURL+"/charges/"+own.ID, nil, testkit.Header{"apikey": m.TestKey}).Want(t, http.StatusNotFound)
	testkit.Do(t, http.MethodGet, srv.BaseURL+"/charges/"+own.ID, nil, testkit.Header{"apikey": m.TestKey, "Quita-Account": bella.ID}).Want(t, http.StatusOK)

	// An e-mail that already logs in cannot take a second login.
	taken := invite(t, srv, m.TestKey, joao.ID, m.Email)
	tb := newBrowser(t, srv)
	tp := tb.get(strings.TrimPrefix(taken.URL, srv.URL))
	if res := tb.post(strings.TrimPrefix(taken.URL, srv.URL), url.Values{"csrf": {csrfOf(t, tp.Body)}, "password": {pw}, "password_confirm": {pw}}); res.Status != http.StatusConflict ||
		!strings.Contains(res.Body, "já tem acesso") {
		t.Errorf("taken e-mail: %d", res.Status)
	}

	// Disabling the sub-account ends its session, its login and its
	// pending invitation.
	pending := invite(t, srv, m.TestKey, bella.ID, "outro@pizzaria.example.com")
	apiAs[apiSubaccount](t, srv, http.MethodPost, "/subaccounts/"+bella.ID+"/disable", m.TestKey, nil, http.StatusOK)
	if res := inv.get("/dashboard/test/"); res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Location, "/dashboard/login") {
		t.Errorf("the disabled sub-account's session: %d %q", res.Status, res.Location)
	}
	relog := newBrowser(t, srv)
	lp := relog.get("/dashboard/login")
	if res := relog.post("/dashboard/login", url.Values{"csrf": {csrfOf(t, lp.Body)}, "email": {"vendas@pizzaria.example.com"}, "password": {pw}}); res.Status != http.StatusUnauthorized {
		t.Errorf("the disabled sub-account's login: %d", res.Status)
	}
	if res := newBrowser(t, srv).get(strings.TrimPrefix(pending.URL, srv.URL)); res.Status != http.StatusGone || !strings.Contains(res.Body, "desativou") {
		t.Errorf("a disabled sub-account's invitation: %d", res.Status)
	}

	// Seven days on, an unused invitation has expired.
	old := invite(t, srv, m.TestKey, joao.ID, "joao@example.com")
	srv.Advance(t, domain.InvitationTTL+time.Second)
	if res := newBrowser(t, srv).get(strings.TrimPrefix(old.URL, srv.URL)); res.Status != http.StatusGone || !strings.Contains(res.Body, "expirou") {
		t.Errorf("expired invitation: %d", res.Status)
	}
	listed = testkit.Do(t, http.MethodGet, srv.BaseURL+"/subaccounts/"+joao.ID+"/invitations", nil, testkit.Header{"apikey": m.TestKey}).Want(t, 200)
	if !strings.Contains(string(listed.Body), `"status":"expired"`) {
		t.Errorf("expired invitation listed as %s", listed.Body)
	}

	// The links went to the log at info level, and no token is in a
	// warning or an error.
	tokens := []string{token, tokenOf(taken.URL), tokenOf(pending.URL), tokenOf(old.URL)}
	infos := 0
	for _, l := range logs.lines(t) {
		for _, tok := range tokens {
			if !strings.Contains(l.Text, tok) {
				continue
			}
			if l.Level != "INFO" || !strings.Contains(l.Text, "sub-account login invited") {
				t.Errorf("a token in a %s line: %s", l.Level, l.Text)
			}
			infos++
		}
	}
	if infos != len(tokens) {
		t.Errorf("%d info lines carry a link, want %d", infos, len(tokens))
	}
}

func tokenOf(link string) string { return link[strings.LastIndexByte(link, '/')+1:] }
