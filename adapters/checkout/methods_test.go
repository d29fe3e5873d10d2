package checkout_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/checkout"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

const (
	boletoLine    = "99990000095000000000000000000000199999999999999"
	boletoBarcode = "99991999900000123450000000000000000000000000"
	mbReference   = "123456789"
	cryptoAddress = "0x00112233445566778899aabbccddeeff00112233"
)

// multiView is a pending BRL charge offering every method the page knows,
// with their data filled.
func multiView(raw string) app.CheckoutView {
	v := view(raw, domain.StatusPending)
	v.Methods = []domain.Method{domain.MethodPix, domain.MethodBoleto, domain.MethodCreditCard, domain.MethodCrypto,
		domain.MethodMultibanco, domain.MethodMBWay}
	v.Boleto = &app.CheckoutBoleto{Line: boletoLine, Barcode: boletoBarcode, PDFURL: "https://pay.example.com/boleto/x.pdf",
		ExpiresAt: time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)}
	v.Multibanco = &app.CheckoutMultibanco{Entity: "21999", Reference: mbReference, ExpiresAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	v.Card = &app.CheckoutCard{RedirectURL: "https://cards.example.com/pay/abc"}
	v.Crypto = &app.CheckoutCrypto{Address: cryptoAddress, Network: "ETHEREUM", Currency: "USDT", Amount: "222.202080"}
	v.MBWayPhoneEnding = "678"
	return v
}

func page(t *testing.T, v app.CheckoutView, header ...string) string {
	t.Helper()
	res, body := get(t, newHandler(&fakeSource{views: map[string]app.CheckoutView{v.RawID: v}}), "/checkout/"+v.RawID, header...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("page: %d", res.StatusCode)
	}
	return body
}

// The switcher: a labelled radio list, one radio per offered method in the
// charge's order, the first chosen; a single method gets no switcher.
func TestMethodSwitcher(t *testing.T) {
	t.Parallel()
	body := page(t, multiView(rawPending))
	if !strings.Contains(body, `<fieldset class="methods">`+"\n"+`<legend>Como você quer pagar?</legend>`) {
		t.Error("no labelled method group")
	}
	last := -1
	for i, kind := range []string{"pix", "boleto", "card", "crypto", "multibanco", "mbway"} {
		radio := `<input type="radio" name="method" id="m-` + kind + `" value="` + kind + `" aria-controls="panel-` + kind + `"`
		at := strings.Index(body, radio)
		if at < 0 {
			t.Errorf("no radio for %s", kind)
			continue
		}
		if at < last {
			t.Errorf("radio %s out of the charge's order", kind)
		}
		last = at
		if checked := strings.HasPrefix(body[at+len(radio):], " checked"); checked != (i == 0) {
			t.Errorf("radio %s checked=%v", kind, checked)
		}
		if !strings.Contains(body, `id="panel-`+kind+`" data-method="`+kind+`" role="region"`) {
			t.Errorf("no panel for %s", kind)
		}
	}
	if !strings.Contains(body, "<title>Pagamento: R$ 1.234,56") {
		t.Error("a multi-method page is not titled as a Pix payment only")
	}
	en := page(t, multiView(rawPending), "Accept-Language", "en")
	for _, want := range []string{"How do you want to pay?", "<span>Credit card</span>", "<span>Crypto</span>"} {
		if !strings.Contains(en, want) {
			t.Errorf("English switcher lacks %q", want)
		}
	}

	single := page(t, view(rawPending, domain.StatusPending))
	if strings.Contains(single, `class="methods"`) || strings.Contains(single, `name="method"`) {
		t.Error("a Pix-only page shows a switcher")
	}
	if !strings.Contains(single, "<title>Pague com Pix: R$ 1.234,56") {
		t.Error("a Pix-only page lost its title")
	}
}

// Each panel shows its method's public data in the payer's language.
func TestMethodPanels(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		lang   string
		view   func() app.CheckoutView
		want   []string
		absent []string
	}{
		{"boleto", "pt-BR", func() app.CheckoutView { return multiView(rawPending) }, []string{
			`<textarea id="boleto-line" class="mono" readonly`, ">" + boletoLine + "</textarea>",
			`id="copy-boleto" type="button" class="btn copy-btn" data-target="boleto-line"`, "Copiar linha digitável",
			`<dd id="boleto-barcode" class="mono">` + boletoBarcode + `</dd>`,
			`<a id="boleto-pdf" class="link" href="https://pay.example.com/boleto/x.pdf" rel="noopener noreferrer">Baixar boleto (PDF)</a>`,
			// 02:00 UTC on the 25th is the 24th in Brasília.
			`<dd id="boleto-due">24/11/2026</dd>`,
		}, nil},
		{"boleto without PDF", "pt-BR", func() app.CheckoutView {
			v := multiView(rawPending)
			v.Boleto.PDFURL = "javascript:alert(1)"
			return v
		}, []string{">" + boletoLine + "</textarea>"}, []string{"boleto-pdf", "javascript:"}},
		{"multibanco", "pt-BR", func() app.CheckoutView {
			v := multiView(rawPending)
			v.Currency, v.Methods = "EUR", []domain.Method{domain.MethodMultibanco, domain.MethodMBWay}
			return v
		}, []string{
			`<dd id="mb-entity" class="mono">21999</dd>`, `<dd id="mb-reference" class="mono">123 456 789</dd>`,
			`<dd id="mb-amount">1.234,56 €</dd>`, `<dd id="mb-due">25/11/2026</dd>`, "Entidade", "Referência",
		}, []string{"boleto-line", "brcode"}},
		{"multibanco en", "en", func() app.CheckoutView {
			v := multiView(rawPending)
			v.Currency, v.Methods = "EUR", []domain.Method{domain.MethodMultibanco}
			return v
		}, []string{`<dd id="mb-amount">€1,234.56</dd>`, `<dd id="mb-due">Nov 25, 2026</dd>`, "Entity", "Reference"}, []string{`class="methods"`}},
		{"mbway", "pt-BR", func() app.CheckoutView { return multiView(rawPending) }, []string{
			`<p id="mbway-note" class="callout">Enviamos o pedido de pagamento para o app MB WAY do telemóvel terminado em 678.`,
		}, nil},
		{"card in test mode: the sandbox card screen", "pt-BR", func() app.CheckoutView { return multiView(rawPending) }, []string{
			`<a id="card-link" class="btn" href="` + rawPending + `/card">Pagar com cartão</a>`,
		}, []string{"cards.example.com"}},
		{"card in live mode: the acquirer's page", "en", func() app.CheckoutView {
			v := multiView(rawPending)
			v.TestMode = false
			return v
		}, []string{`<a id="card-link" class="btn" href="https://cards.example.com/pay/abc">Pay by card</a>`}, []string{rawPending + "/card"}},
		{"crypto", "pt-BR", func() app.CheckoutView { return multiView(rawPending) }, []string{
			`<textarea id="crypto-address" class="mono" readonly`, ">" + cryptoAddress + "</textarea>",
			`id="copy-crypto" type="button" class="btn copy-btn" data-target="crypto-address"`,
			`<dd id="crypto-network">ETHEREUM</dd>`, `<dd id="crypto-amount" class="mono">222.202080 USDT</dd>`,
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := page(t, tt.view(), "Accept-Language", tt.lang)
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(body, a) {
					t.Errorf("page has %q", a)
				}
			}
			if strings.Contains(body, "Preparando") || strings.Contains(body, "Preparing") || strings.Contains(body, "data-methods-pending") {
				t.Error("a filled panel says it is preparing")
			}
		})
	}
}

// While the acquirer still fills the method data, each such panel says it
// is preparing, the page asks the script to reload when the data is ready,
// and the status endpoint says when it is (and nothing more).
func TestPanelsPreparing(t *testing.T) {
	t.Parallel()
	v := multiView(rawPending)
	v.TestMode = false
	v.Boleto, v.Multibanco, v.Card, v.Crypto, v.MethodsPending = nil, nil, nil, nil, true
	h := newHandler(&fakeSource{views: map[string]app.CheckoutView{rawPending: v}})
	_, body := get(t, h, "/checkout/"+rawPending)
	if n := strings.Count(body, `<p class="preparing" role="status">`); n != 4 {
		t.Errorf("%d preparing panels, want 4 (boleto, card, crypto, multibanco)", n)
	}
	if !strings.Contains(body, `data-methods-pending="true"`) {
		t.Error("the page does not ask to reload when the data is ready")
	}
	if !strings.Contains(body, ">"+brCode+"</textarea>") || !strings.Contains(body, `id="mbway-note"`) {
		t.Error("Pix and MB WAY need no acquirer data and must show at once")
	}
	_, st := get(t, h, "/checkout/"+rawPending+"/status")
	var m map[string]any
	if err := json.Unmarshal([]byte(st), &m); err != nil {
		t.Fatal(err)
	}
	if m["methods_ready"] != false || len(m) != 3 {
		t.Errorf("status while preparing: %v", m)
	}
}

// Nothing on a multi-method page is inline code or points elsewhere than
// the checkout, the QR, the boleto PDF and the acquirer's card page.
func TestMultiMethodPageHasNoInlineCode(t *testing.T) {
	t.Parallel()
	v := multiView(rawPending)
	v.TestMode = false
	body := page(t, v)
	if m := handlerAttr.FindString(body); m != "" {
		t.Errorf("inline event handler: %q", m)
	}
	if m := styleAttr.FindString(body); m != "" {
		t.Errorf("inline style attribute: %q", m)
	}
	if strings.Contains(body, "<style") || len(scriptTag.FindAllString(body, -1)) != 1 {
		t.Error("inline <style> or extra <script>")
	}
	allowed := map[string]bool{
		v.Pix.QRCodeURL: true, v.Boleto.PDFURL: true, v.Card.RedirectURL: true,
	}
	for _, m := range reference.FindAllStringSubmatch(body, -1) {
		if ref := m[1]; !allowed[ref] && (strings.Contains(ref, ":") || strings.HasPrefix(ref, "/")) {
			t.Errorf("reference outside the checkout: %q", ref)
		}
	}
	total := len(body) + checkout.PageWeight()
	t.Logf("multi-method page weight: HTML %d B + CSS/JS %d B = %d B", len(body), checkout.PageWeight(), total)
	if total > 50*1024 {
		t.Errorf("page weighs %d bytes, budget is 51200", total)
	}
}

// The card screen: test mode only, JSON posts only, each decision once.
func TestCardScreen(t *testing.T) {
	t.Parallel()
	test := multiView(rawPending)
	live := multiView(rawBroken)
	live.TestMode = false
	h := newHandler(&fakeSource{views: map[string]app.CheckoutView{rawPending: test, rawBroken: live}})

	res, body := get(t, h, "/checkout/"+rawPending+"/card")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("card screen: %d", res.StatusCode)
	}
	for _, want := range []string{
		`id="card-screen"`, `data-back="../` + rawPending + `"`, `id="card-approve" type="button" class="btn" data-decision="approve"`,
		`id="card-decline"`, `href="../static/checkout.css?v=`, `src="../static/checkout.js?v=`, "Modo de teste", "R$ 1.234,56",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card screen lacks %q", want)
		}
	}
	if res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("X-Frame-Options") != "DENY" {
		t.Error("card screen without the security headers")
	}
	if m := handlerAttr.FindString(body) + styleAttr.FindString(body); m != "" {
		t.Errorf("inline code on the card screen: %q", m)
	}
	_, en := get(t, h, "/checkout/"+rawPending+"/card?lang=en")
	if !strings.Contains(en, `data-back="../`+rawPending+`?lang=en"`) || !strings.Contains(en, ">Approve payment<") {
		t.Error("the English card screen does not keep the language")
	}
	_, enPage := get(t, h, "/checkout/"+rawPending+"?lang=en")
	if !strings.Contains(enPage, `href="`+rawPending+`/card?lang=en"`) {
		t.Error("the English page's card link drops the language")
	}
	if res, _ := get(t, h, "/checkout/"+rawBroken+"/card"); res.StatusCode != http.StatusNotFound {
		t.Errorf("live card screen: %d, want 404", res.StatusCode)
	}
	res, _ = get(t, h, "/checkout/pix/card/"+rawPending)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "../../"+rawPending+"/card" {
		t.Errorf("sandbox card redirect: %d %q", res.StatusCode, res.Header.Get("Location"))
	}

	post := func(raw, ct, body string) int {
		req := httptest.NewRequest(http.MethodPost, "/checkout/"+raw+"/card", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, tt := range []struct {
		raw, ct, body string
		want          int
	}{
		{rawPending, "text/plain", `{"decision":"approve"}`, http.StatusUnsupportedMediaType},
		{rawPending, "application/json", `{"decision":"yes"}`, http.StatusBadRequest},
		{rawBroken, "application/json", `{"decision":"approve"}`, http.StatusNotFound},
		{rawUnknown, "application/json", `{"decision":"approve"}`, http.StatusNotFound},
		{rawPending, "application/json; charset=utf-8", `{"decision":"approve"}`, http.StatusOK},
		{rawPending, "application/json", `{"decision":"decline"}`, http.StatusConflict},
	} {
		if got := post(tt.raw, tt.ct, tt.body); got != tt.want {
			t.Errorf("POST %s %s %s: %d, want %d", tt.raw[:6], tt.ct, tt.body, got, tt.want)
		}
	}
	_, body = get(t, h, "/checkout/"+rawPending+"/card")
	if strings.Contains(body, `id="card-approve"`) || !strings.Contains(body, "não está mais aguardando pagamento") {
		t.Error("a paid charge's card screen still offers the decision")
	}
}
