package checkout_test

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// The CSP forbids inline code; the markup must not need it either, and it
// must not reach out to another origin (the QR, on the page's own origin
// in production, is the one absolute address).
func TestPageHasNoInlineCodeOrExternalRequests(t *testing.T) {
	t.Parallel()
	res, body := get(t, defaultHandler(), "/checkout/"+rawPending)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	scripts := scriptTag.FindAllStringSubmatch(body, -1)
	if len(scripts) != 1 {
		t.Fatalf("want exactly one script tag, got %d", len(scripts))
	}
	for _, s := range scripts {
		if !strings.Contains(s[1], `src="static/checkout.js?v=`) || strings.TrimSpace(s[2]) != "" {
			t.Errorf("inline or foreign script: %q", s[0])
		}
	}
	if m := handlerAttr.FindString(body); m != "" {
		t.Errorf("inline event handler: %q", m)
	}
	if m := styleAttr.FindString(body); m != "" {
		t.Errorf("inline style attribute: %q", m)
	}
	if strings.Contains(body, "<style") {
		t.Error("inline <style> element")
	}
	qr := "http://127.0.0.1:8080/checkout/" + rawPending + "/qr.png"
	for _, m := range reference.FindAllStringSubmatch(body, -1) {
		if ref := m[1]; ref != qr && (strings.Contains(ref, ":") || strings.HasPrefix(ref, "/")) {
			t.Errorf("reference outside the checkout: %q", ref)
		}
	}
}

func TestPageShowsTheCharge(t *testing.T) {
	t.Parallel()
	res, body := get(t, defaultHandler(), "/checkout/"+rawPending)
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	for _, want := range []string{
		`<html lang="pt-BR">`,
		"R$ 1.234,56",
		"Padaria Pão &amp; Cia",
		"Pedido #42 &lt;b&gt;bolo&lt;/b&gt;", // escaped, never markup
		`<textarea id="brcode" readonly`,
		">" + brCode + "</textarea>",
		`<label for="brcode">Pix copia e cola</label>`,
		`src="http://127.0.0.1:8080/checkout/` + rawPending + `/qr.png"`,
		`alt="QR Code Pix para pagar R$ 1.234,56 a Padaria Pão &amp; Cia"`,
		`data-status-url="` + rawPending + `/status"`,
		`data-expires-at="2026-11-22T15:30:00.000Z"`,
		`role="timer"`,
		`aria-live="polite"`,
		">30:00</span>",                                    // countdown before the script runs
		`datetime="2026-11-22T15:30:00.000Z">12:30</time>`, // Brasília time
		"Como pagar",
		"Modo de teste",
		`href="` + rawPending + `?lang=en"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>bolo</b>") {
		t.Error("description rendered as markup")
	}
}

func TestLanguages(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	tests := []struct {
		name    string
		path    string
		accept  string
		lang    string
		present []string
	}{
		{"default", "/checkout/" + rawPending, "", "pt-BR", []string{"R$ 1.234,56", "Copiar código Pix", "Expira em", "Pagamento para"}},
		{"portuguese", "/checkout/" + rawPending, "pt-BR,pt;q=0.9", "pt-BR", []string{"R$ 1.234,56", "Como pagar"}},
		{"english", "/checkout/" + rawPending, "en-US,en;q=0.9", "en", []string{"R$ 1,234.56", "Copy Pix code", "Expires in", "How to pay", "Payment to", "Test mode"}},
		{"switch link wins", "/checkout/" + rawPending + "?lang=en", "pt-BR", "en", []string{"Pay with Pix"}},
		{"switch back", "/checkout/" + rawPending + "?lang=pt-BR", "en", "pt-BR", []string{"Pague com Pix"}},
		{"english 404", "/checkout/" + rawUnknown, "en", "en", []string{"Charge not found"}},
		{"portuguese 404", "/checkout/" + rawUnknown, "", "pt-BR", []string{"Cobrança não encontrada"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, body := get(t, h, tt.path, "Accept-Language", tt.accept)
			if !strings.Contains(body, `<html lang="`+tt.lang+`">`) {
				t.Errorf("want lang %s", tt.lang)
			}
			if v := res.Header.Get("Vary"); v != "Accept-Language" {
				t.Errorf("Vary %q", v)
			}
			for _, p := range tt.present {
				if !strings.Contains(body, p) {
					t.Errorf("page lacks %q", p)
				}
			}
		})
	}
}

func TestNotFoundPage(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	for _, p := range []string{
		"/checkout/" + rawUnknown,                  // well-formed, no such charge
		"/checkout/short",                          // malformed
		"/checkout/ch_" + rawPending[:23],          // the public id is not the address
		"/checkout/" + strings.ToUpper(rawPending), // base32 ids are lower case
		"/checkout/",
		"/checkout/static/nope.js",
	} {
		res, body := get(t, h, p)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, res.StatusCode)
		}
		if !strings.Contains(body, "Cobrança não encontrada") || !strings.Contains(body, "<h1>") {
			t.Errorf("%s: not the friendly 404 page: %.200s", p, body)
		}
		if strings.Contains(body, "checkout.js") {
			t.Errorf("%s: 404 page loads the script", p)
		}
	}
}

func TestStoreFailureShowsErrorPage(t *testing.T) {
	t.Parallel()
	h := newHandler(&fakeSource{err: errors.New("database on fire")})
	res, body := get(t, h, "/checkout/"+rawPending)
	if res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d", res.StatusCode)
	}
	if !strings.Contains(body, "Algo deu errado") || strings.Contains(body, "fire") {
		t.Errorf("want the generic error page without detail: %.300s", body)
	}
	res, body = get(t, h, "/checkout/"+rawPending+"/status")
	if res.StatusCode != http.StatusInternalServerError || strings.Contains(body, "fire") {
		t.Errorf("status endpoint: %d %s", res.StatusCode, body)
	}
}

// Each public status shows its own section and hides the others; the
// payment panel is only there while pending.
func TestEachStatusHasItsOwnState(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	titles := map[domain.Status]string{
		domain.StatusPending:    "Pague com Pix",
		domain.StatusPaid:       "Pagamento confirmado",
		domain.StatusProcessing: "Pagamento em análise",
		domain.StatusExpired:    "Este Pix expirou",
		domain.StatusCancelled:  "Cobrança cancelada",
		domain.StatusRefunded:   "Pagamento devolvido",
		domain.StatusFailed:     "Pagamento não concluído",
		domain.StatusDisputed:   "Pagamento em contestação",
	}
	for _, s := range domain.Statuses {
		raw := (string(s) + strings.Repeat("x", 26))[:26]
		_, body := get(t, h, "/checkout/"+raw)
		if !strings.Contains(body, `data-status="`+string(s)+`"`) {
			t.Errorf("%s: data-status missing", s)
		}
		if !strings.Contains(body, titles[s]) {
			t.Errorf("%s: title %q missing", s, titles[s])
		}
		visible := 0
		seen := map[string]bool{}
		for _, m := range sectionTag.FindAllStringSubmatch(body, -1) {
			seen[m[1]] = true
			hidden := strings.Contains(m[0], " hidden")
			if m[1] == string(s) && hidden {
				t.Errorf("%s: its own section is hidden", s)
			}
			if !hidden {
				visible++
			}
		}
		if visible != 1 {
			t.Errorf("%s: %d visible state sections, want 1", s, visible)
		}
		for _, want := range domain.Statuses {
			if !seen[string(want)] {
				t.Errorf("%s: no section for %s (the page could not switch to it)", s, want)
			}
		}
	}
}

// A charge whose method data never came (the acquirer failed, not still
// preparing) says the method is unavailable instead of showing a payment
// form it cannot honour; one with no method the page knows says so.
func TestMethodWithoutPanelSaysSo(t *testing.T) {
	t.Parallel()
	v := view(rawPending, domain.StatusPending)
	v.Pix = nil
	v.Methods = []domain.Method{domain.MethodBoleto}
	_, body := get(t, newHandler(&fakeSource{views: map[string]app.CheckoutView{rawPending: v}}), "/checkout/"+rawPending)
	if !strings.Contains(body, "Esta forma de pagamento não está disponível") || strings.Contains(body, `id="brcode"`) ||
		strings.Contains(body, `id="boleto-line"`) || strings.Contains(body, "Preparando") {
		t.Errorf("want the unavailable notice and no code: %.500s", body)
	}
	v.Methods = nil
	_, body = get(t, newHandler(&fakeSource{views: map[string]app.CheckoutView{rawPending: v}}), "/checkout/"+rawPending)
	if !strings.Contains(body, "ainda não pode ser paga por esta página") || strings.Contains(body, `class="panel`) {
		t.Errorf("want the no-method notice and no panel: %.500s", body)
	}
}

func TestPendingWithoutPixSaysSo(t *testing.T) {
	t.Parallel()
	v := view(rawPending, domain.StatusPending)
	v.Pix = nil
	_, body := get(t, newHandler(&fakeSource{views: map[string]app.CheckoutView{rawPending: v}}), "/checkout/"+rawPending)
	if !strings.Contains(body, "não está disponível") || strings.Contains(body, `id="brcode"`) {
		t.Errorf("want the unavailable notice and no code: %.500s", body)
	}
}

// Past expires_at a charge may still read pending (the server waits for
// news of a Pix paid in time before it expires it): the page then hides
// the ways to pay and says a payment made in time is being confirmed,
// without declaring the charge expired; the card screen takes no decision.
func TestPendingPastExpiryAwaitsConfirmation(t *testing.T) {
	t.Parallel()
	noteShown := regexp.MustCompile(`<p id="time-up-note" class="callout" role="status">`)
	card := rawPending[:len(rawPending)-4] + "card"
	for _, tc := range []struct {
		name   string
		now    time.Time
		timeUp bool
	}{
		{"a second before expires_at", expires.Add(-time.Second), false},
		{"at expires_at", expires, true},
		{"in the grace", expires.Add(2 * time.Minute), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := view(rawPending, domain.StatusPending)
			v.Now = tc.now
			c := view(card, domain.StatusPending)
			c.Now, c.Methods = tc.now, []domain.Method{domain.MethodPix, domain.MethodCreditCard}
			h := newHandler(&fakeSource{views: map[string]app.CheckoutView{rawPending: v, card: c}})
			_, body := get(t, h, "/checkout/"+rawPending)
			if !strings.Contains(body, `data-status="pending"`) || strings.Contains(body, `data-state="expired" aria-labelledby="state-expired-title">`) {
				t.Fatalf("the page does not show pending: %.400s", body)
			}
			if got := noteShown.MatchString(body); got != tc.timeUp {
				t.Errorf("confirmation note shown = %v, want %v", got, tc.timeUp)
			}
			if got := strings.Contains(body, `class="state-pending time-up"`); got != tc.timeUp {
				t.Errorf("ways to pay hidden = %v, want %v", got, tc.timeUp)
			}
			if got := strings.Contains(body, `<span id="countdown-label">Prazo encerrado</span>`); got != tc.timeUp {
				t.Errorf("label says time is up = %v, want %v", got, tc.timeUp)
			}
			if !strings.Contains(body, "Se você pagou antes do prazo, estamos confirmando o pagamento.") {
				t.Error("the note's text is missing (the script shows it at countdown zero)")
			}
			_, body = get(t, h, "/checkout/"+card+"/card")
			if got := strings.Contains(body, `id="card-approve"`); got == tc.timeUp {
				t.Errorf("card screen offers a decision = %v, want %v", got, !tc.timeUp)
			}
		})
	}
}
