package checkout_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// A payment with several methods on a real server: a panel per method with
// the data the API returns, and nothing private (customer document, the
// whole MB WAY phone, fees, provider, other metadata, prefixed ids).
func TestMultiMethodPageOnServer(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Multi")

	brl, ch := createPayment(t, srv, acct.TestKey, map[string]any{
		"amount": 123456, "currency": "BRL", "paymentMethods": []string{"PIX", "BOLETO", "CREDIT_CARD", "CRYPTO"},
		"customerName": "Maria Pagadora", "customerDocument": payerCPF, "customerEmail": "maria@example.com",
		"metadata": map[string]any{"description": "Pedido 77", "internal_note": "cliente-vip-segredo"},
	})
	if brl.BoletoLine == nil || brl.CryptoAddress == nil || brl.CardRedirectURL == nil {
		t.Fatalf("method data not filled: %+v", brl)
	}
	res, body := fetch(t, ch.CheckoutURL)
	if res.Status != http.StatusOK {
		t.Fatalf("page: %d", res.Status)
	}
	for _, want := range []string{
		`id="m-pix" value="pix" aria-controls="panel-pix" checked`, `id="m-boleto"`, `id="m-card"`, `id="m-crypto"`,
		">" + *brl.BoletoLine + "</textarea>", ">" + *brl.BoletoBarcode + "</dd>",
		">" + *brl.CryptoAddress + "</textarea>", *brl.CryptoAmount + " " + *brl.CryptoCurrency,
		`id="card-link" class="btn" href="` + strings.TrimPrefix(ch.ID, "ch_") + `/card"`,
		"R$ 1.234,56", "Pedido 77",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, secret := range []string{payerCPF, "529.982.247-25", "Maria Pagadora", "maria@example.com", "cliente-vip-segredo",
		"internal_note", brl.ID, ch.ID, "sandbox", "providerFee", "platformFee", "netAmount"} {
		if strings.Contains(body, secret) {
			t.Errorf("page shows private %q", secret)
		}
	}

	eur, ch2 := createPayment(t, srv, acct.TestKey, map[string]any{
		"amount": 123456, "currency": "EUR", "paymentMethods": []string{"MULTIBANCO", "MBWAY"},
		"metadata": map[string]any{"phone": "+351912345678"},
	})
	if eur.MBReference == nil {
		t.Fatalf("Multibanco data not filled: %+v", eur)
	}
	ref := *eur.MBReference
	_, body = fetch(t, ch2.CheckoutURL)
	for _, want := range []string{
		`id="mb-entity" class="mono">` + *eur.MBEntity + "<", `id="mb-reference" class="mono">` + ref[:3] + " " + ref[3:6] + " " + ref[6:] + "<",
		`id="mb-amount">1.234,56 €<`, "telemóvel terminado em 678",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("EUR page lacks %q", want)
		}
	}
	for _, secret := range []string{"+351912345678", "912345678", "12345678"} {
		if strings.Contains(body, secret) {
			t.Errorf("EUR page shows the phone (%q)", secret)
		}
	}
	_, body = fetch(t, ch2.CheckoutURL, "Accept-Language", "en-GB,en;q=0.9")
	if !strings.Contains(body, `id="mb-amount">€1,234.56<`) || !strings.Contains(body, "phone ending in 678") {
		t.Errorf("English EUR page: %.300s", body)
	}
	// No card on this payment, and it is test mode: no card screen.
	if res, _ := fetch(t, ch2.CheckoutURL+"/card"); res.Status != http.StatusNotFound {
		t.Errorf("card screen of a payment without CREDIT_CARD: %d", res.Status)
	}
}

// The sandbox card screen drives the payment through the app layer: the
// API then reads APPROVED paid with CREDIT_CARD; a live payment has no
// card screen.
func TestCardScreenOnServer(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Cartão")
	p, ch := createPayment(t, srv, acct.TestKey, map[string]any{
		"amount": 5000, "currency": "BRL", "paymentMethods": []string{"PIX", "CREDIT_CARD"},
	})
	screen := ch.CheckoutURL + "/card"
	res, body := fetch(t, screen)
	if res.Status != http.StatusOK || !strings.Contains(body, `id="card-approve"`) || !strings.Contains(body, `href="../static/checkout.css?v=`) {
		t.Fatalf("card screen: %d %.400s", res.Status, body)
	}
	// The sandbox's cardRedirectUrl is that screen.
	if p.CardRedirectURL == nil || *p.CardRedirectURL != screen {
		t.Errorf("cardRedirectUrl %v, want %s", p.CardRedirectURL, screen)
	}

	post := func(ct, body string) (int, map[string]any) {
		t.Helper()
		res := testkit.Do(t, http.MethodPost, screen, body, testkit.Header{"Content-Type": ct})
		var m map[string]any
		_ = json.Unmarshal(res.Body, &m)
		return res.Status, m
	}
	if code, _ := post("application/x-www-form-urlencoded", "decision=approve"); code != http.StatusUnsupportedMediaType {
		t.Errorf("form post: %d, want 415", code)
	}
	if code, _ := post("application/json", `{"decision":"maybe"}`); code != http.StatusBadRequest {
		t.Errorf("bad decision: %d, want 400", code)
	}
	if code, m := post("application/json", `{"decision":"approve"}`); code != http.StatusOK || m["status"] != "paid" || len(m) != 3 {
		t.Fatalf("approve: %d %v", code, m)
	}
	var got struct {
		Status   string `json:"status"`
		PaidWith string `json:"paidWith"`
	}
	doJSON(t, http.MethodGet, srv.BaseURL+"/payments/"+p.ID, acct.TestKey, nil, &got, http.StatusOK)
	if got.Status != "APPROVED" || got.PaidWith != "CREDIT_CARD" {
		t.Errorf("after approval the payment reads %+v", got)
	}
	if code, _ := post("application/json", `{"decision":"decline"}`); code != http.StatusConflict {
		t.Errorf("decision on a paid payment: %d, want 409", code)
	}

	// Decline.
	p2, ch2 := createPayment(t, srv, acct.TestKey, map[string]any{"amount": 700, "paymentMethods": []string{"CREDIT_CARD"}})
	screen = ch2.CheckoutURL + "/card"
	if code, m := post("application/json", `{"decision":"decline"}`); code != http.StatusOK || m["status"] != "failed" {
		t.Errorf("decline: %d %v", code, m)
	}
	doJSON(t, http.MethodGet, srv.BaseURL+"/payments/"+p2.ID, acct.TestKey, nil, &got, http.StatusOK)
	if got.Status != "REFUSED" {
		t.Errorf("after decline the payment reads %+v", got)
	}

	// Live mode: no card screen, and the page links to the acquirer's URL.
	lp, live := createPayment(t, srv, acct.LiveKey, map[string]any{"amount": 700, "paymentMethods": []string{"PIX", "CREDIT_CARD"}})
	if res, _ := fetch(t, live.CheckoutURL+"/card"); res.Status != http.StatusNotFound {
		t.Errorf("live card screen: %d, want 404", res.Status)
	}
	screen = live.CheckoutURL + "/card"
	if code, _ := post("application/json", `{"decision":"approve"}`); code != http.StatusNotFound {
		t.Errorf("live card decision: %d, want 404", code)
	}
	_, body = fetch(t, live.CheckoutURL)
	if lp.CardRedirectURL == nil || !strings.Contains(body, `id="card-link" class="btn" href="`+*lp.CardRedirectURL+`"`) {
		t.Errorf("live page does not link to the acquirer's card page %v", lp.CardRedirectURL)
	}
}
