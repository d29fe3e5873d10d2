package checkout_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/adapters/checkout"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Raw ids are 26 base32 characters.
const (
	rawPending = "pendingpendingpendingpendi"
	rawUnknown = "unknownunknownunknownunkno"
	rawBroken  = "brokenbrokenbrokenbrokenbr"
	brCode     = "00020101021226830014br.gov.bcb.pix2561qr.example.com/cob/abc5204000053039865802BR5904LOJA6009SAO PAULO62070503***6304ABCD"
)

var (
	now     = time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	expires = now.Add(30 * time.Minute)
)

// fakeSource serves views by raw id; status follows the view.
type fakeSource struct {
	views map[string]app.CheckoutView
	err   error
}

func (f *fakeSource) View(_ context.Context, raw string) (app.CheckoutView, error) {
	if f.err != nil {
		return app.CheckoutView{}, f.err
	}
	v, ok := f.views[raw]
	if !ok {
		return app.CheckoutView{}, ports.ErrNotFound
	}
	return v, nil
}

func (f *fakeSource) Status(ctx context.Context, raw string) (app.CheckoutStatus, error) {
	v, err := f.View(ctx, raw)
	return app.CheckoutStatus{Status: v.Status, ExpiresAt: v.ExpiresAt, MethodsReady: !v.MethodsPending}, err
}

func (f *fakeSource) CardScreen(ctx context.Context, raw string) (app.CheckoutView, error) {
	v, err := f.View(ctx, raw)
	if err == nil && (!v.TestMode || !slices.Contains(v.Methods, domain.MethodCreditCard)) {
		return app.CheckoutView{}, ports.ErrNotFound
	}
	return v, err
}

// CardDecision records the decision; the view's status follows it.
func (f *fakeSource) CardDecision(ctx context.Context, raw string, approve bool) (app.CheckoutStatus, error) {
	v, err := f.CardScreen(ctx, raw)
	if err != nil {
		return app.CheckoutStatus{}, err
	}
	if v.Status != domain.StatusPending {
		return app.CheckoutStatus{}, app.ErrCardScreenUnavailable
	}
	v.Status = domain.StatusFailed
	if approve {
		v.Status = domain.StatusPaid
	}
	f.views[raw] = v
	return app.CheckoutStatus{Status: v.Status, ExpiresAt: v.ExpiresAt, MethodsReady: true}, nil
}

func view(raw string, status domain.Status) app.CheckoutView {
	return app.CheckoutView{
		RawID:        raw,
		MerchantName: "Padaria Pão & Cia",
		Amount:       123456,
		Currency:     domain.CurrencyBRL,
		Status:       status,
		Description:  "Pedido #42 <b>bolo</b>",
		ExpiresAt:    expires,
		Methods:      []domain.Method{domain.MethodPix},
		Pix:          &app.CheckoutPix{BRCode: brCode, QRCodeURL: "http://127.0.0.1:8080/checkout/" + raw + "/qr.png"},
		TestMode:     true,
		Now:          now,
	}
}

func newHandler(src checkout.Source) http.Handler {
	r := mux.NewRouter()
	checkout.New(src, nil, checkout.Config{}).Routes(r.PathPrefix("/checkout").Subrouter())
	return r
}

func defaultHandler() http.Handler {
	views := map[string]app.CheckoutView{rawPending: view(rawPending, domain.StatusPending)}
	for _, s := range domain.Statuses {
		raw := (string(s) + strings.Repeat("x", 26))[:26]
		views[raw] = view(raw, s)
	}
	return newHandler(&fakeSource{views: views})
}

func get(t *testing.T, h http.Handler, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestFormatAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		minor    int64
		currency string
		lang     string
		want     string
	}{
		{0, "BRL", checkout.LangPortuguese, "R$ 0,00"},
		{1, "BRL", checkout.LangPortuguese, "R$ 0,01"},
		{99, "BRL", checkout.LangPortuguese, "R$ 0,99"},
		{100, "BRL", checkout.LangPortuguese, "R$ 1,00"},
		{123456, "BRL", checkout.LangPortuguese, "R$ 1.234,56"},
		{100000, "BRL", checkout.LangPortuguese, "R$ 1.000,00"},
		{99999999, "BRL", checkout.LangPortuguese, "R$ 999.999,99"},
		{10000000000000, "BRL", checkout.LangPortuguese, "R$ 100.000.000.000,00"},
		{123456, "BRL", checkout.LangEnglish, "R$ 1,234.56"},
		{5, "", checkout.LangEnglish, "R$ 0.05"},
		{-123456, "BRL", checkout.LangPortuguese, "-R$ 1.234,56"},
		{1050, "EUR", checkout.LangPortuguese, "10,50 €"},
		{123456, "EUR", checkout.LangPortuguese, "1.234,56 €"},
		{123456, "EUR", checkout.LangEnglish, "€1,234.56"},
		{-123456, "EUR", checkout.LangPortuguese, "-1.234,56 €"},
		{123456, "USD", checkout.LangPortuguese, "US$ 1.234,56"},
		{123456, "USD", checkout.LangEnglish, "$1,234.56"},
		{123456, "GBP", checkout.LangEnglish, "£1,234.56"},
		{123456, "USDT", checkout.LangPortuguese, "1.234,56 USDT"},
		{123456, "USDT", checkout.LangEnglish, "1,234.56 USDT"},
		{math.MaxInt64, "BRL", checkout.LangPortuguese, "R$ 92.233.720.368.547.758,07"},
		{math.MinInt64, "BRL", checkout.LangPortuguese, "-R$ 92.233.720.368.547.758,08"},
	}
	for _, tt := range tests {
		if got := checkout.FormatAmount(tt.minor, tt.currency, tt.lang); got != tt.want {
			t.Errorf("FormatAmount(%d, %q, %q) = %q, want %q", tt.minor, tt.currency, tt.lang, got, tt.want)
		}
	}
}

func TestNegotiateLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct{ header, want string }{
		{"", checkout.LangPortuguese},
		{"pt-BR,pt;q=0.9,en;q=0.8", checkout.LangPortuguese},
		{"en-US,en;q=0.9", checkout.LangEnglish},
		{"EN", checkout.LangEnglish},
		{"en-GB;q=0.8, pt-BR;q=0.9", checkout.LangPortuguese},
		{"pt;q=0.5, en;q=0.6", checkout.LangEnglish},
		{"fr-FR,fr;q=0.9,en;q=0.5", checkout.LangEnglish},
		{"fr-FR,de", checkout.LangPortuguese},
		{"en;q=0, pt", checkout.LangPortuguese},
		{"en;q=bogus", checkout.LangPortuguese},
		{"*", checkout.LangPortuguese},
		{"english", checkout.LangPortuguese},
	}
	for _, tt := range tests {
		if got := checkout.NegotiateLanguage(tt.header); got != tt.want {
			t.Errorf("NegotiateLanguage(%q) = %q, want %q", tt.header, got, tt.want)
		}
	}
}

// Every response the checkout sends carries the strict headers.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	paths := []string{
		"/checkout/" + rawPending,
		"/checkout/" + rawPending + "/status",
		"/checkout/" + rawUnknown,
		"/checkout/not-an-id",
		"/checkout/static/checkout.js",
		"/checkout/static/checkout.css",
	}
	for _, p := range paths {
		res, _ := get(t, h, p)
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows inline or eval: %q", p, csp)
		}
		for k, want := range map[string]string{
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "no-referrer",
			"X-Content-Type-Options": "nosniff",
		} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", p, k, got, want)
			}
		}
	}
}

var (
	scriptTag   = regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	handlerAttr = regexp.MustCompile(`(?i)<[^>]+\son[a-z]+\s*=`)
	styleAttr   = regexp.MustCompile(`(?i)<[^>]+\sstyle\s*=`)
	reference   = regexp.MustCompile(`(?i)\s(?:src|href)="([^"]*)"`)
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

var sectionTag = regexp.MustCompile(`<section class="[^"]*" data-state="([a-z]+)"[^>]*>`)

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

func TestStatusEndpoint(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	res, body := get(t, h, "/checkout/"+rawPending+"/status")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": "pending", "expires_at": "2026-11-22T15:30:00.000Z", "methods_ready": true}
	if len(got) != len(want) || got["status"] != want["status"] || got["expires_at"] != want["expires_at"] || got["methods_ready"] != true {
		t.Errorf("body %v, want exactly %v", got, want)
	}
	for _, p := range []string{"/checkout/" + rawUnknown + "/status", "/checkout/nope/status"} {
		if res, _ := get(t, h, p); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, res.StatusCode)
		}
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	_, page := get(t, h, "/checkout/"+rawPending)
	for _, tt := range []struct{ name, ctype string }{
		{"checkout.js", "text/javascript; charset=utf-8"},
		{"checkout.css", "text/css; charset=utf-8"},
		{"icon.svg", "image/svg+xml"},
	} {
		ref := regexp.MustCompile(`static/` + regexp.QuoteMeta(tt.name) + `\?v=[0-9a-f]{12}`).FindString(page)
		if ref == "" {
			t.Errorf("page does not link %s with a version", tt.name)
			continue
		}
		res, body := get(t, h, "/checkout/"+ref)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != tt.ctype || len(body) == 0 {
			t.Errorf("%s: %d %q %d bytes", tt.name, res.StatusCode, res.Header.Get("Content-Type"), len(body))
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("%s: versioned asset not immutable: %q", tt.name, cc)
		}
		res, _ = get(t, h, "/checkout/"+ref, "If-None-Match", res.Header.Get("ETag"))
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidation gave %d", tt.name, res.StatusCode)
		}
	}
}

// The page, its stylesheet and its script together stay within 50 KB.
func TestPageWeight(t *testing.T) {
	t.Parallel()
	_, body := get(t, defaultHandler(), "/checkout/"+rawPending, "Accept-Language", "pt-BR")
	total := len(body) + checkout.PageWeight()
	t.Logf("page weight: HTML %d B + CSS/JS %d B = %d B", len(body), checkout.PageWeight(), total)
	if total > 50*1024 {
		t.Errorf("page weighs %d bytes, budget is 51200", total)
	}
}

func TestHeadAnswersWithoutBody(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodHead, "/checkout/"+rawPending, nil)
	rec := httptest.NewRecorder()
	defaultHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}
