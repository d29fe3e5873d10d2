package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/mux"

	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/api"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

type anyCallback struct{}

func (anyCallback) VerifyCallback(context.Context, string, string) (bool, error) { return false, nil }

func (anyCallback) NotifyRecurrences(context.Context, string, []byte) (int, int, error) {
	return 0, 0, nil
}

func (anyCallback) NotifyRecurringCharges(context.Context, string, []byte) (int, int, error) {
	return 0, 0, nil
}

// everyRoute lists the /v1 operations of fullRouter as "METHOD /path"
// relative to /v1.
func everyRoute(t *testing.T) map[string]bool {
	t.Helper()
	r := fullRouter(t)
	out := map[string]bool{}
	err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil { // the 405 fallbacks have no method
			return nil
		}
		rest, ok := strings.CutPrefix(tpl, "/v1/")
		if !ok {
			return nil // health, metrics, checkout: outside the /v1 surface
		}
		for _, m := range methods {
			if m == http.MethodHead {
				continue
			}
			out[m+" /"+rest] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fullRouter builds the handler with every optional surface switched on.
func fullRouter(t *testing.T) *mux.Router {
	t.Helper()
	// Every service a route depends on is present (a zero value: routes
	// are only registered, never called), so a surface added later behind
	// a new optional dependency is walked too.
	deps := httpapi.Deps{PixCallbacks: anyCallback{}, RecurringCallbacks: anyCallback{}}
	v := reflect.ValueOf(&deps).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && f.IsNil() && f.Type().Elem().Kind() == reflect.Struct {
			f.Set(reflect.New(f.Type().Elem()))
		}
	}
	h := httpapi.NewHandler(httpapi.Config{CheckoutPath: "/checkout"}, deps)
	r, ok := h.(*mux.Router)
	if !ok {
		t.Fatalf("NewHandler returned %T, want *mux.Router", h)
	}
	return r
}

func documented(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			out[m+" "+path] = true
		}
	}
	return out
}

// TestRoutesAreDocumented fails when the server registers a /v1 route that
// api/openapi.yaml does not describe, or the document describes an
// operation the server does not serve.
func TestRoutesAreDocumented(t *testing.T) {
	served, doc := everyRoute(t), documented(t)
	if len(served) < 30 {
		t.Fatalf("walked only %d routes: %v", len(served), served)
	}
	var missing, phantom []string
	for op := range served {
		if !doc[op] {
			missing = append(missing, op)
		}
	}
	for op := range doc {
		if !served[op] {
			phantom = append(phantom, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(phantom)
	if len(missing) > 0 {
		t.Errorf("routes missing from api/openapi.yaml:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(phantom) > 0 {
		t.Errorf("operations in api/openapi.yaml the server does not serve:\n  %s", strings.Join(phantom, "\n  "))
	}
}

// TestOpenAPIDocumentServed: GET /v1/openapi.json needs no key and returns
// the embedded document as JSON.
func TestOpenAPIDocumentServed(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: testenv.SQLiteDSN(t)})
	r := testkit.Do(t, http.MethodGet, srv.BaseURL+"/openapi.json", nil, nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, content type %q: %.200s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	want, err := api.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Body, want) {
		t.Error("served document differs from api.JSON()")
	}
	doc, err := openapi3.NewLoader().LoadFromData(r.Body)
	if err != nil || doc.Paths.Find("/openapi.json") == nil {
		t.Errorf("served document does not load or lacks its own path: %v", err)
	}
}

// TestOpenAPIDocumentCachingAndGzip: the document carries a strong ETag
// and Vary: Accept-Encoding; a client that accepts gzip gets it compressed
// (the same document once inflated) under its own ETag; If-None-Match with
// the ETag of the representation asked for is 304 without a body, with
// the other representation's ETag or a stale one the full document.
func TestOpenAPIDocumentCachingAndGzip(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: testenv.SQLiteDSN(t)})
	want, err := api.JSON()
	if err != nil {
		t.Fatal(err)
	}
	url := srv.BaseURL + "/openapi.json"
	// An explicit Accept-Encoding turns the transport's own gzip off, so
	// the body is read as sent.
	plain := testkit.Do(t, http.MethodGet, url, nil, testkit.Header{"Accept-Encoding": "identity"})
	plainTag := plain.Header.Get("ETag")
	if plain.Status != http.StatusOK || !bytes.Equal(plain.Body, want) || plain.Header.Get("Content-Encoding") != "" {
		t.Fatalf("identity: %d, Content-Encoding %q, body equal %v", plain.Status, plain.Header.Get("Content-Encoding"), bytes.Equal(plain.Body, want))
	}
	if !regexp.MustCompile(`^"[0-9a-f]{32}"$`).MatchString(plainTag) || plain.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("identity: ETag %q, Vary %q", plainTag, plain.Header.Get("Vary"))
	}
	if plain.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Errorf("Content-Length %q, want %d", plain.Header.Get("Content-Length"), len(want))
	}

	gz := testkit.Do(t, http.MethodGet, url, nil, testkit.Header{"Accept-Encoding": "br;q=1.0, gzip;q=0.8"})
	gzTag := gz.Header.Get("ETag")
	if gz.Status != http.StatusOK || gz.Header.Get("Content-Encoding") != "gzip" || len(gz.Body) >= len(want)/2 {
		t.Fatalf("gzip: %d, Content-Encoding %q, %d bytes of %d", gz.Status, gz.Header.Get("Content-Encoding"), len(gz.Body), len(want))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
	if err != nil {
		t.Fatal(err)
	}
	inflated, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(inflated, want) {
		t.Fatalf("gzip body does not inflate to the document: %v", err)
	}
	if gzTag == plainTag || !strings.HasPrefix(gzTag, `"`) || gz.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("gzip: ETag %q (identity %q), Vary %q", gzTag, plainTag, gz.Header.Get("Vary"))
	}
	if again := testkit.Do(t, http.MethodGet, url, nil, testkit.Header{"Accept-Encoding": "gzip"}); again.Header.Get("ETag") != gzTag || !bytes.Equal(again.Body, gz.Body) {
		t.Error("a second gzip answer differs from the first")
	}
	if refused := testkit.Do(t, http.MethodGet, url, nil, testkit.Header{"Accept-Encoding": "gzip;q=0, *"}); refused.Header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 was answered with gzip")
	}

	for _, tc := range []struct {
		name, accept, ifNoneMatch string
		want                      int
	}{
		{"identity, its ETag", "identity", plainTag, http.StatusNotModified},
		{"identity, weak form", "identity", "W/" + plainTag, http.StatusNotModified},
		{"identity, in a list", "identity", `"0000", ` + plainTag, http.StatusNotModified},
		{"identity, any", "identity", "*", http.StatusNotModified},
		{"gzip, its ETag", "gzip", gzTag, http.StatusNotModified},
		{"gzip, the identity ETag", "gzip", plainTag, http.StatusOK},
		{"identity, the gzip ETag", "identity", gzTag, http.StatusOK},
		{"stale", "gzip", `"0123456789abcdef0123456789abcdef"`, http.StatusOK},
	} {
		r := testkit.Do(t, http.MethodGet, url, nil, testkit.Header{"Accept-Encoding": tc.accept, "If-None-Match": tc.ifNoneMatch})
		if r.Status != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, r.Status, tc.want)
			continue
		}
		if r.Status == http.StatusNotModified && (len(r.Body) != 0 || r.Header.Get("ETag") == "" || r.Header.Get("X-Request-Id") == "") {
			t.Errorf("%s: 304 with %d body bytes, ETag %q, X-Request-Id %q", tc.name, len(r.Body), r.Header.Get("ETag"), r.Header.Get("X-Request-Id"))
		}
	}
}

// TestChargeIncludeIsChecked: include takes only qr_code_base64; anything
// else is 400 rather than a silent answer without the image (found by the
// OpenAPI contract check, which documents include as an enum).
func TestChargeIncludeIsChecked(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: testenv.SQLiteDSN(t)})
	acct := srv.NewAccount(t, "Loja Include")
	created := testkit.Do(t, http.MethodPost, srv.BaseURL+"/pix/charges", map[string]any{"amount": 1000},
		testkit.Header{"apikey": acct.TestKey, "Idempotency-Key": "include-check-1"})
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	var ch struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(created.Body, &ch); err != nil {
		t.Fatal(err)
	}
	r := apiCall(t, http.MethodGet, srv.BaseURL+"/charges/"+ch.ID+"?include=qr_code_base46", acct.TestKey, nil)
	wantStatus(t, r, http.StatusBadRequest, "parameter_invalid")
	if r.Body["error"].(map[string]any)["param"] != "include" {
		t.Errorf("param: %s", r.Raw)
	}
	r = apiCall(t, http.MethodGet, srv.BaseURL+"/charges/"+ch.ID+"?include=qr_code_base64", acct.TestKey, nil)
	wantStatus(t, r, http.StatusOK, "")
	if pix, _ := r.Body["pix"].(map[string]any); pix["qr_code_base64"] == "" || pix["qr_code_base64"] == nil {
		t.Errorf("no image: %s", r.Raw)
	}
}

// TestActionsRefuseFields: the actions that take no body accept none or {}
// and refuse a field as unknown, as every other body does (found by the
// OpenAPI contract check: a {"reason"} sent to cancel was silently dropped).
func TestActionsRefuseFields(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: testenv.SQLiteDSN(t)})
	acct := srv.NewAccount(t, "Loja Acoes")
	for i, path := range []string{"/payments/%s/cancel", "/test_helpers/charges/%s/expire"} {
		created := testkit.Do(t, http.MethodPost, srv.BaseURL+"/pix/charges", map[string]any{"amount": 1000},
			testkit.Header{"apikey": acct.TestKey, "Idempotency-Key": "actions-check-" + strconv.Itoa(i)})
		var ch struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(created.Body, &ch); err != nil || ch.ID == "" {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		url := srv.BaseURL + strings.Replace(path, "%s", ch.ID, 1)
		r := apiCall(t, http.MethodPost, url, acct.TestKey, map[string]any{"reason": "changed my mind"})
		wantStatus(t, r, http.StatusBadRequest, "parameter_unknown")
		if r.Body["error"].(map[string]any)["param"] != "reason" {
			t.Errorf("%s param: %s", path, r.Raw)
		}
		wantStatus(t, apiCall(t, http.MethodPost, url, acct.TestKey, map[string]any{}), http.StatusOK, "")
	}
	for _, path := range []string{"/webhooks/transaction-secret/rotate"} {
		wantStatus(t, apiCall(t, http.MethodPost, srv.BaseURL+path, acct.TestKey, map[string]any{"x": 1}), http.StatusBadRequest, "parameter_unknown")
		wantStatus(t, apiCall(t, http.MethodPost, srv.BaseURL+path, acct.TestKey, nil), http.StatusOK, "")
	}
}
