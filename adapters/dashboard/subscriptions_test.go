package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/dashboard"
	"github.com/quitapix/quita/quitatest"
)

// The subscriptions list and a subscription's page, in both languages and
// both modes: who pays, how much (fixed or "Variável, até"), how often,
// the next cycle, the cycles paid and failed, the status as a shop owner
// reads it; the status filter; the cycles' charges linked both ways; and
// never the payer's document in clear.
func TestSubscriptionPages(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Academia Boa Forma")
	pending := createSub(t, srv, m.TestKey, subTerms("Maria Silva"))
	variable := subTerms("João Souza")
	delete(variable, "amount")
	variable["variable"] = map[string]any{"max_amount": 10000}
	variable["interval"], variable["journey"] = "weekly", "qr_code"
	qr := createSub(t, srv, m.TestKey, variable)
	active := activeSub(t, srv, m.TestKey, subTerms("Ana Lima"), 2)
	failed := subAPI(t, srv, http.MethodPost, "/test_helpers/subscriptions/"+active.ID+"/advance", m.TestKey,
		map[string]any{"fail": true}, http.StatusOK)
	if failed.LatestCycle == nil || failed.LatestCycle.Cycle != 3 || failed.LatestCycle.Status != "retrying" {
		t.Fatalf("cycle 3 after a failed debit: %+v", failed.LatestCycle)
	}
	b := newBrowser(t, srv)
	b.login(m)

	list := b.get("/dashboard/test/subscriptions")
	if list.Status != http.StatusOK || rowsOf(list.Body) != 3 {
		t.Fatalf("list: %d, %d rows\n%.3000s", list.Status, rowsOf(list.Body), list.Body)
	}
	for _, want := range []string{"Maria Silva", "João Souza", "Ana Lima", "R$ 49,90", "Variável, até R$ 100,00", "Mensal", "Semanal",
		"Aguardando autorização", "Ativa", `href="/dashboard/test/subscriptions/` + active.ID + `"`, "Assinaturas", ">2 / 0<"} {
		if !strings.Contains(list.Body, want) {
			t.Errorf("list lacks %q", want)
		}
	}
	// Newest first.
	if i, j := strings.Index(list.Body, qr.ID), strings.Index(list.Body, pending.ID); i < 0 || j < 0 || i > j {
		t.Errorf("the newer subscription is not listed first")
	}
	noDocument(t, "the list", list.Body)

	filtered := b.get("/dashboard/test/subscriptions?status=active")
	if rowsOf(filtered.Body) != 1 || !strings.Contains(filtered.Body, active.ID) || !strings.Contains(filtered.Body, `value="active" selected`) {
		t.Errorf("status=active: %d rows", rowsOf(filtered.Body))
	}
	if none := b.get("/dashboard/test/subscriptions?status=completed"); rowsOf(none.Body) != 0 || !strings.Contains(none.Body, "Nenhuma assinatura") {
		t.Errorf("status=completed lists %d", rowsOf(none.Body))
	}
	if bad := b.get("/dashboard/test/subscriptions?status=bogus"); rowsOf(bad.Body) != 3 || !strings.Contains(bad.Body, "Filtro inválido ignorado.") {
		t.Errorf("a bad filter: %d rows", rowsOf(bad.Body))
	}

	// The active one: its terms, cycles and their charges.
	detail := b.get("/dashboard/test/subscriptions/" + active.ID)
	if detail.Status != http.StatusOK {
		t.Fatalf("detail: %d\n%.2000s", detail.Status, detail.Body)
	}
	for _, want := range []string{"Ana Lima", "*********25", "Ativa", "Mensal", "CTR-2027-001", "Plano mensal",
		"Até 3 novas tentativas em dias úteis", "Pedido de autorização no app do banco do pagador", "sem data de fim",
		"2 pagos · 0 falhos · 1 em aberto", "Nova tentativa agendada", `data-cycle="3"`, `data-cycle="1"`, "rec_status", "APROVADA",
		"PERMITE_3R_7D", "JORNADA_1", "MENSAL", `id="cancel-form"`, "Próximo ciclo"} {
		if !strings.Contains(detail.Body, want) {
			t.Errorf("detail lacks %q", want)
		}
	}
	if strings.Contains(detail.Body, `id="sub-brcode"`) {
		t.Error("an authorisation-request subscription shows a code to paste")
	}
	noDocument(t, "the detail", detail.Body)
	if i, j := strings.Index(detail.Body, `data-cycle="3"`), strings.Index(detail.Body, `data-cycle="1"`); i > j {
		t.Error("cycles are not latest first")
	}
	link := regexp.MustCompile(`href="(/dashboard/test/charges/ch_[a-z2-7]+)"`).FindStringSubmatch(detail.Body[strings.Index(detail.Body, `data-cycle="3"`):])
	if link == nil {
		t.Fatal("cycle 3 does not link its charge")
	}
	charge := b.get(link[1])
	if charge.Status != http.StatusOK || !strings.Contains(charge.Body, `href="/dashboard/test/subscriptions/`+active.ID+`"`) ||
		!strings.Contains(charge.Body, "Assinatura <a") || !strings.Contains(charge.Body, "· ciclo 3") {
		t.Errorf("the cycle's charge page does not link back to its subscription: %d", charge.Status)
	}
	noDocument(t, "the cycle's charge page", charge.Body)

	// The pending QR one: the code to paste, its deadline, a variable amount.
	qrPage := b.get("/dashboard/test/subscriptions/" + qr.ID)
	if qr.Pix == nil || qr.Pix.BRCode == "" || !strings.Contains(qrPage.Body, `value="`+qr.Pix.BRCode+`"`) {
		t.Error("the pending QR subscription does not show its BR Code")
	}
	for _, want := range []string{"Aguardando autorização", "Autorizar até", "Variável, até R$ 100,00", "Semanal", "valor a definir",
		"QR Code de autorização", "Nenhum ciclo cobrado ainda", "JORNADA_2"} {
		if !strings.Contains(qrPage.Body, want) {
			t.Errorf("QR detail lacks %q", want)
		}
	}
	noDocument(t, "the QR detail", qrPage.Body)

	// A first payment's charge: linked from the terms, and back.
	withFirst := subTerms("Rita Dias")
	withFirst["journey"], withFirst["first_payment"] = "qr_code_with_first_payment", map[string]any{"amount": 1990}
	first := createSub(t, srv, m.TestKey, withFirst)
	firstPage := b.get("/dashboard/test/subscriptions/" + first.ID)
	fp := regexp.MustCompile(`R\$ 19,90 · <a class="mono" href="(/dashboard/test/charges/ch_[a-z2-7]+)"`).FindStringSubmatch(firstPage.Body)
	if fp == nil || !strings.Contains(firstPage.Body, "QR Code com primeiro pagamento") {
		t.Fatal("the first payment is not on the subscription's page")
	}
	if p := b.get(fp[1]); !strings.Contains(p.Body, first.ID+`</a> · Primeiro pagamento`) {
		t.Error("the first payment's charge does not link back to its subscription")
	}

	// English.
	b.inEnglish()
	enList := b.get("/dashboard/test/subscriptions")
	for _, want := range []string{`lang="en"`, "Subscriptions", "Awaiting authorization", "Active", "Monthly", "Weekly",
		"Variable, up to R$ 100.00", "R$ 49.90"} {
		if !strings.Contains(enList.Body, want) {
			t.Errorf("English list lacks %q", want)
		}
	}
	enDetail := b.get("/dashboard/test/subscriptions/" + active.ID)
	for _, want := range []string{"Retry scheduled", "Up to 3 retries on business days", "2 paid · 0 failed · 1 open", "Cancel subscription"} {
		if !strings.Contains(enDetail.Body, want) {
			t.Errorf("English detail lacks %q", want)
		}
	}
	noDocument(t, "the English pages", enList.Body+enDetail.Body)

	// Live mode lists none of the test subscriptions, and their pages are 404.
	live := b.get("/dashboard/live/subscriptions")
	if live.Status != http.StatusOK || rowsOf(live.Body) != 0 || strings.Contains(live.Body, active.ID) {
		t.Errorf("live mode lists test subscriptions: %d", rowsOf(live.Body))
	}
	if strings.Contains(live.Body, "test_helpers") || !strings.Contains(live.Body, "POST /v1/subscriptions") {
		t.Error("the live empty state is not the live one")
	}
	for _, p := range []string{"/dashboard/live/subscriptions/" + active.ID, "/dashboard/test/subscriptions/not-an-id",
		"/dashboard/test/subscriptions/sub_aaaaaaaaaaaaaaaaaaaaaaaaaa", "/dashboard/test/subscriptions?after=ch_nope"} {
		if res := b.get(p); res.Status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, res.Status)
		}
	}
	// The mode switch leads to the other mode's list, never an id.
	if !strings.Contains(detail.Body, `href="/dashboard/live/subscriptions" id="mode-switch"`) {
		t.Error("the detail's mode switch does not lead to the live list")
	}
}

// A merchant with no subscription is told how to make one, in each mode.
func TestSubscriptionsEmptyState(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Sem Assinaturas")
	b := newBrowser(t, srv)
	b.login(m)
	test := b.get("/dashboard/test/subscriptions")
	for _, want := range []string{`id="subscriptions-empty"`, "Nenhuma assinatura", "POST /v1/subscriptions",
		"/v1/test_helpers/subscriptions/{id}/authorize", `href="/v1/openapi.json"`, `aria-current="page">Assinaturas`} {
		if !strings.Contains(test.Body, want) {
			t.Errorf("test empty state lacks %q", want)
		}
	}
	b.inEnglish()
	if en := b.get("/dashboard/live/subscriptions"); !strings.Contains(en.Body, "are created through the API") || strings.Contains(en.Body, "test_helpers") {
		t.Error("the English live empty state")
	}
}

// Twenty-seven subscriptions page by 25 with a cursor, keeping the
// filter; a weekly one's cycles page by 25 too.
func TestSubscriptionsPaging(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Muitas Assinaturas")
	weekly := subTerms("Cliente Semanal")
	weekly["interval"] = "weekly"
	many := activeSub(t, srv, m.TestKey, weekly, 27)
	ids := map[string]bool{many.ID: true}
	for range 26 {
		ids[createSub(t, srv, m.TestKey, subTerms("Cliente")).ID] = true
	}
	b := newBrowser(t, srv)
	b.login(m)
	first := b.get("/dashboard/test/subscriptions?status=pending_authorization")
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.Body)
	if rowsOf(first.Body) != 25 || next == nil || !strings.Contains(next[1], "status=pending_authorization") {
		t.Fatalf("first page: %d rows, next %v", rowsOf(first.Body), next)
	}
	second := b.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	if rowsOf(second.Body) != 1 || strings.Contains(second.Body, `rel="next"`) || !strings.Contains(second.Body, "Primeira página") {
		t.Fatalf("second page: %d rows", rowsOf(second.Body))
	}
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`<tr data-sub="(sub_[a-z2-7]+)"`).FindAllStringSubmatch(first.Body+second.Body, -1) {
		if seen[m[1]] || !ids[m[1]] || m[1] == many.ID {
			t.Errorf("listed %s twice, or not a pending one of ours", m[1])
		}
		seen[m[1]] = true
	}
	if all := b.get("/dashboard/test/subscriptions"); rowsOf(all.Body) != 25 {
		t.Errorf("unfiltered first page: %d rows", rowsOf(all.Body))
	}

	page := b.get("/dashboard/test/subscriptions/" + many.ID)
	if total := len(page.Body) + dashboard.AssetWeight(); total > 100*1024 {
		t.Errorf("a page of 25 cycles weighs %d bytes with its assets, budget 100 KB", total)
	}
	older := regexp.MustCompile(`href="([^"]+)" rel="next" id="older-cycles"`).FindStringSubmatch(page.Body)
	if n := strings.Count(page.Body, `<tr data-cycle=`); n != 25 || older == nil || !strings.Contains(page.Body, `data-cycle="27"`) {
		t.Fatalf("cycles, first page: %d rows, older %v", n, older)
	}
	rest := b.get(older[1])
	if n := strings.Count(rest.Body, `<tr data-cycle=`); n != 2 || !strings.Contains(rest.Body, `data-cycle="1"`) || strings.Contains(rest.Body, `data-cycle="3"`) {
		t.Errorf("cycles, older page: %d rows", n)
	}
	if res := b.get("/dashboard/test/subscriptions/" + many.ID + "?cycles_before=x"); res.Status != http.StatusNotFound {
		t.Errorf("a bad cycles cursor: %d", res.Status)
	}
}

// The cancel form is the API's cancel behind the dashboard's CSRF check:
// without the session's token, with another session's, or from another
// account it changes nothing; with it the subscription is cancelled by
// the merchant, once, and its page offers no button any more.
func TestSubscriptionCancelForm(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Cancela")
	other := newMerchant(t, srv, "Outra Loja")
	sub := activeSub(t, srv, m.TestKey, subTerms("Maria Silva"), 1)
	detail := "/dashboard/test/subscriptions/" + sub.ID
	b := newBrowser(t, srv)
	b.login(m)
	ob := newBrowser(t, srv)
	ob.login(other)
	page := b.get(detail)
	if !strings.Contains(page.Body, `action="`+detail+`/cancel"`) || !strings.Contains(page.Body, `data-confirm="Cancelar esta assinatura?`) {
		t.Fatal("no cancel form with a confirmation on an active subscription")
	}
	otherToken := csrfOf(t, ob.get("/dashboard/test/subscriptions").Body)
	for name, form := range map[string]url.Values{
		"no token":          {},
		"another session's": {"csrf": {otherToken}},
		"a made-up token":   {"csrf": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}},
	} {
		if res := b.post(detail+"/cancel", form); res.Status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, res.Status)
		}
	}
	// Another account's session, with its own valid token: not its subscription.
	if res := ob.post(detail+"/cancel", url.Values{"csrf": {otherToken}}); res.Status != http.StatusNotFound || strings.Contains(res.Body, sub.ID) {
		t.Errorf("another account: %d, want 404", res.Status)
	}
	// Without a session at all.
	if res := newBrowser(t, srv).post(detail+"/cancel", url.Values{"csrf": {csrfOf(t, page.Body)}}); res.Status != http.StatusForbidden {
		t.Errorf("no session: %d, want 403", res.Status)
	}
	if got := subAPI(t, srv, http.MethodGet, "/subscriptions/"+sub.ID, m.TestKey, nil, http.StatusOK); got.Status != "active" {
		t.Fatalf("a refused form changed the subscription: %s", got.Status)
	}

	form := url.Values{"csrf": {csrfOf(t, page.Body)}}
	// The PSP down: the mandate cannot be cancelled, nothing changes, the
	// page says so (never the acquirer's error).
	srv.Sandbox.SetDown(true)
	res := b.post(detail+"/cancel", form)
	srv.Sandbox.SetDown(false)
	if res.Location != detail+"?err=subscription_cancel_failed" {
		t.Errorf("cancel with the PSP down: %d %q", res.Status, res.Location)
	} else if !strings.Contains(b.get(res.Location).Body, "Nada mudou") {
		t.Error("the page does not say the cancel failed")
	}
	if got := subAPI(t, srv, http.MethodGet, "/subscriptions/"+sub.ID, m.TestKey, nil, http.StatusOK); got.Status != "active" {
		t.Fatalf("a failed cancel changed the subscription: %s", got.Status)
	}
	if res := b.post(detail+"/cancel", form); res.Status != http.StatusSeeOther || res.Location != detail+"?done=subscription_cancelled" {
		t.Fatalf("cancel: %d %q", res.Status, res.Location)
	}
	got := subAPI(t, srv, http.MethodGet, "/subscriptions/"+sub.ID, m.TestKey, nil, http.StatusOK)
	if got.Status != "cancelled" || got.CancelledBy != "merchant" {
		t.Fatalf("after the form: %s by %q", got.Status, got.CancelledBy)
	}
	after := b.get(detail + "?done=subscription_cancelled")
	for _, want := range []string{"Assinatura cancelada.", "Cancelada pelo lojista", "CANCELADA", `id="sub-ended"`} {
		if !strings.Contains(after.Body, want) {
			t.Errorf("cancelled page lacks %q", want)
		}
	}
	if strings.Contains(after.Body, `id="cancel-form"`) {
		t.Error("a cancelled subscription still offers the cancel button")
	}
	if res := b.post(detail+"/cancel", form); res.Location != detail+"?err=subscription_not_cancellable" {
		t.Errorf("second cancel: %d %q", res.Status, res.Location)
	} else if !strings.Contains(b.get(res.Location).Body, "já terminou") {
		t.Error("the page does not say why")
	}
	// Revoked by the payer reads so.
	revoked := activeSub(t, srv, m.TestKey, subTerms("Pedro Alves"), 0)
	subAPI(t, srv, http.MethodPost, "/test_helpers/subscriptions/"+revoked.ID+"/revoke", m.TestKey, nil, http.StatusOK)
	if p := b.get("/dashboard/test/subscriptions/" + revoked.ID); !strings.Contains(p.Body, "Cancelada pelo pagador") || strings.Contains(p.Body, `id="cancel-form"`) {
		t.Error("a revoked subscription's page")
	}
}
