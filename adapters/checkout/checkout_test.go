package checkout_test

import (
	"context"
	"io"
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

// Raw ids of the older format (26 base32 characters), still
// valid; fresh ones, 35, come from the e2e tests.
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

var (
	scriptTag   = regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	handlerAttr = regexp.MustCompile(`(?i)<[^>]+\son[a-z]+\s*=`)
	styleAttr   = regexp.MustCompile(`(?i)<[^>]+\sstyle\s*=`)
	reference   = regexp.MustCompile(`(?i)\s(?:src|href)="([^"]*)"`)
)

var sectionTag = regexp.MustCompile(`<section class="[^"]*" data-state="([a-z]+)"[^>]*>`)
