package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

type whResp = apiResp

func whCall(t *testing.T, srv *quitatest.Server, method, path, key string, body any) whResp {
	t.Helper()
	return apiCall(t, method, srv.URL+path, key, body)
}

func whWant(t *testing.T, r whResp, status int, code string) {
	t.Helper()
	wantStatus(t, r, status, code)
}

// whReceiver verifies every delivery with the secret it is given.
type whReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	bodies [][]byte
	bad    int
}

func newWHReceiver(t *testing.T) *whReceiver {
	rc := &whReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err := domain.VerifyWebhook(r.Header.Get(domain.SignatureHeader), body, time.Now(), rc.secret); err != nil {
			rc.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.bodies = append(rc.bodies, body)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func TestWebhooksHTTP(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			testWebhooksHTTP(t, d.dsn(t))
		})
	}
}

func testWebhooksHTTP(t *testing.T, dsn string) {
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: dsn, Webhooks: app.WebhooksConfig{RetrySchedule: []time.Duration{time.Millisecond}}})
	acct := srv.NewAccount(t, "Loja Webhooks")
	if len(acct.TransactionWebhookSecret) != domain.WebhookSecretLen || len(acct.TestTransactionWebhookSecret) != domain.WebhookSecretLen ||
		acct.TransactionWebhookSecret == acct.TestTransactionWebhookSecret {
		t.Fatal("account create shows no distinct transaction secrets per mode")
	}
	key := acct.TestKey
	rc := newWHReceiver(t)

	// The event catalog needs no key.
	cat := whCall(t, srv, "GET", "/v1/webhooks/event-catalog", "", nil)
	whWant(t, cat, 200, "")
	legacy := map[string]bool{}
	for _, e := range cat.List {
		m := e.(map[string]any)
		legacy[m["event"].(string)], _ = m["legacy"].(bool)
		if m["description"] == "" {
			t.Fatalf("catalog entry without description: %v", m)
		}
	}
	if len(legacy) != len(domain.EventCatalog) || !legacy["payment.completed"] || legacy["charge.paid"] || legacy["charge.refunded"] {
		t.Fatalf("catalog: %s", cat.Raw)
	}

	// Auth and validation.
	whWant(t, whCall(t, srv, "GET", "/v1/webhooks/endpoints", "", nil), 401, "")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", "qt_test_nope", map[string]any{"url": rc.srv.URL, "events": []string{"charge.paid"}}), 401, "")
	r := whCall(t, srv, "POST", "/v1/webhooks/endpoints", key, map[string]any{"url": rc.srv.URL, "events": []string{"charge.paid", "charge.nope"}})
	whWant(t, r, 400, "parameter_invalid")
	if r.param() != "events[1]" {
		t.Fatalf("param %q", r.param())
	}
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", key, map[string]any{"url": rc.srv.URL, "events": []string{}}), 400, "parameter_missing")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", key, map[string]any{"events": []string{"charge.paid"}}), 400, "parameter_missing")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", key, map[string]any{"url": "ftp://x", "events": []string{"charge.paid"}}), 400, "parameter_invalid")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", key, map[string]any{"url": rc.srv.URL, "events": []string{"charge.paid"}, "extra": 1}), 400, "parameter_unknown")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", key, "{"), 400, "body_invalid")

	// Create: secret once.
	r = whCall(t, srv, "POST", "/v1/webhooks/endpoints", key, map[string]any{"url": rc.srv.URL + "/hook", "events": []string{"charge.created", "payment.created"}})
	whWant(t, r, 201, "")
	id, secret := r.str("id"), r.str("secret")
	if !strings.HasPrefix(id, "we_") || len(secret) != 64 || r.str("status") != "ACTIVE" || r.str("url") != rc.srv.URL+"/hook" {
		t.Fatalf("create: %s", r.Raw)
	}
	rc.secret = secret

	// List: no secret; the other mode sees nothing.
	r = whCall(t, srv, "GET", "/v1/webhooks/endpoints", key, nil)
	whWant(t, r, 200, "")
	data := r.Body["data"].([]any)
	if len(data) != 1 || strings.Contains(string(r.Raw), secret) || strings.Contains(string(r.Raw), `"secret"`) {
		t.Fatalf("list: %s", r.Raw)
	}
	ep := data[0].(map[string]any)
	if ep["createdAt"] == nil || ep["updatedAt"] == nil || ep["status"] != "ACTIVE" {
		t.Fatalf("list entry: %v", ep)
	}
	if r := whCall(t, srv, "GET", "/v1/webhooks/endpoints", acct.LiveKey, nil); len(r.Body["data"].([]any)) != 0 {
		t.Fatalf("live key sees test endpoints: %s", r.Raw)
	}

	// Update.
	r = whCall(t, srv, "PATCH", "/v1/webhooks/endpoints/"+id, key, map[string]any{"events": []string{"charge.created", "payment.created", "charge.paid"}})
	whWant(t, r, 200, "")
	if r.str("id") != id || len(r.Body["events"].([]any)) != 3 || r.str("status") != "ACTIVE" || r.Body["secret"] != nil {
		t.Fatalf("patch: %s", r.Raw)
	}
	whWant(t, whCall(t, srv, "PATCH", "/v1/webhooks/endpoints/"+id, key, map[string]any{"status": "PAUSED"}), 400, "parameter_invalid")
	whWant(t, whCall(t, srv, "PATCH", "/v1/webhooks/endpoints/"+id, key, map[string]any{"events": []string{"x"}}), 400, "parameter_invalid")
	whWant(t, whCall(t, srv, "PATCH", "/v1/webhooks/endpoints/"+id, acct.LiveKey, map[string]any{"status": "INACTIVE"}), 404, "resource_not_found")
	whWant(t, whCall(t, srv, "PATCH", "/v1/webhooks/endpoints/we_nope", key, map[string]any{"status": "INACTIVE"}), 404, "resource_not_found")

	// Rotate: a new secret, shown once.
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints/"+id+"/rotate-secret", key, map[string]any{"id": "we_other"}), 400, "parameter_invalid")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints/we_nope/rotate-secret", key, nil), 404, "")
	r = whCall(t, srv, "POST", "/v1/webhooks/endpoints/"+id+"/rotate-secret", key, map[string]any{"id": id})
	whWant(t, r, 200, "")
	if r.str("id") != id || len(r.str("secret")) != 64 || r.str("secret") == secret {
		t.Fatalf("rotate: %s", r.Raw)
	}
	rc.secret = r.str("secret")

	// A charge: its events are delivered, signed with the new secret.
	testkit.Do(t, "POST", srv.BaseURL+"/charges", `{"amount":1500,"payment_method":"pix"}`,
		testkit.Header{"apikey": key, "Idempotency-Key": "webhooks-http-0001"}).Want(t, 201)
	ctx := t.Context()
	for range 5 {
		if _, err := srv.App.Webhooks.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.App.Webhooks.DeliverOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rc.mu.Lock()
	got, bad := len(rc.bodies), rc.bad
	rc.mu.Unlock()
	if got != 2 || bad != 0 {
		t.Fatalf("receiver: %d verified, %d bad", got, bad)
	}

	// Deliveries and stats.
	r = whCall(t, srv, "GET", "/v1/webhooks/deliveries", key, nil)
	whWant(t, r, 200, "")
	if r.Body["total"] != float64(2) || r.Body["limit"] != float64(25) || r.Body["offset"] != float64(0) {
		t.Fatalf("deliveries: %s", r.Raw)
	}
	for _, x := range r.Body["data"].([]any) {
		d := x.(map[string]any)
		if !strings.HasPrefix(d["id"].(string), "wd_") || d["endpointId"] != id || d["status"] != "DELIVERED" ||
			d["attempts"] != float64(1) || d["maxAttempts"] != float64(15) || d["lastStatusCode"] != float64(200) ||
			d["deliveredAt"] == nil || d["nextRetryAt"] != nil || d["lastError"] != nil || d["payload"] == nil {
			t.Fatalf("delivery record: %v", d)
		}
		raw, _ := json.Marshal(d["payload"])
		var want, sent any
		_ = json.Unmarshal(raw, &want)
		found := false
		for _, b := range rc.bodies {
			_ = json.Unmarshal(b, &sent)
			if string(mustJSON(t, sent)) == string(mustJSON(t, want)) {
				found = true
			}
		}
		if !found {
			t.Fatalf("payload %s was not what was sent", raw)
		}
	}
	r = whCall(t, srv, "GET", "/v1/webhooks/deliveries?eventType=payment.created&status=DELIVERED&endpointId="+id+"&limit=1", key, nil)
	if r.Body["total"] != float64(1) || len(r.Body["data"].([]any)) != 1 || r.Body["limit"] != float64(1) {
		t.Fatalf("filtered: %s", r.Raw)
	}
	r = whCall(t, srv, "GET", "/v1/webhooks/deliveries?offset=1&limit=1", key, nil)
	if r.Body["total"] != float64(2) || len(r.Body["data"].([]any)) != 1 || r.Body["offset"] != float64(1) {
		t.Fatalf("offset: %s", r.Raw)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "offset=-1", "status=SENT", "eventType=charge.nope"} {
		whWant(t, whCall(t, srv, "GET", "/v1/webhooks/deliveries?"+q, key, nil), 400, "parameter_invalid")
	}
	r = whCall(t, srv, "GET", "/v1/webhooks/stats", key, nil)
	whWant(t, r, 200, "")
	for k, v := range map[string]float64{"total": 2, "PENDING": 0, "PROCESSING": 0, "DELIVERED": 2, "FAILED": 0, "CANCELLED": 0} {
		if r.Body[k] != v {
			t.Fatalf("stats %s: %s", k, r.Raw)
		}
	}
	if r := whCall(t, srv, "GET", "/v1/webhooks/stats", acct.LiveKey, nil); r.Body["total"] != float64(0) {
		t.Fatalf("live stats: %s", r.Raw)
	}

	// Transaction secret rotation acts on the key's mode only: a test key
	// never learns or replaces the secret that signs live deliveries.
	r = whCall(t, srv, "POST", "/v1/webhooks/transaction-secret/rotate", key, nil)
	whWant(t, r, 200, "")
	testSecret := r.str("transactionWebhookSecret")
	if len(testSecret) != 64 || testSecret == acct.TransactionWebhookSecret || testSecret == acct.TestTransactionWebhookSecret {
		t.Fatalf("transaction secret: %s", r.Raw)
	}
	stored, err := srv.App.DB.GetAccount(t.Context(), acct.AccountID)
	if err != nil || stored.TransactionWebhookSecret != acct.TransactionWebhookSecret || stored.TestTransactionWebhookSecret != testSecret {
		t.Fatalf("after a test-key rotation: live secret changed %v, test secret stored %v (%v)",
			stored.TransactionWebhookSecret != acct.TransactionWebhookSecret, stored.TestTransactionWebhookSecret == testSecret, err)
	}
	r = whCall(t, srv, "POST", "/v1/webhooks/transaction-secret/rotate", acct.LiveKey, nil)
	whWant(t, r, 200, "")
	stored, err = srv.App.DB.GetAccount(t.Context(), acct.AccountID)
	if liveSecret := r.str("transactionWebhookSecret"); err != nil || stored.TransactionWebhookSecret != liveSecret || stored.TestTransactionWebhookSecret != testSecret {
		t.Fatalf("after a live-key rotation the secrets are not per mode (%v)", err)
	}
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/transaction-secret/rotate", "", nil), 401, "")

	// Delete.
	whWant(t, whCall(t, srv, "DELETE", "/v1/webhooks/endpoints/"+id, acct.LiveKey, nil), 404, "")
	r = whCall(t, srv, "DELETE", "/v1/webhooks/endpoints/"+id, key, nil)
	whWant(t, r, 200, "")
	if r.Body["deleted"] != true {
		t.Fatalf("delete: %s", r.Raw)
	}
	whWant(t, whCall(t, srv, "DELETE", "/v1/webhooks/endpoints/"+id, key, nil), 404, "")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints/"+id+"/rotate-secret", key, nil), 404, "")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// With production rules, live endpoints must be https and public.
func TestWebhookEndpointSSRF(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{StrictWebhookURLs: true})
	acct := srv.NewAccount(t, "Loja SSRF")
	for _, tt := range []struct {
		key, url, code string
	}{
		{acct.LiveKey, "https://127.0.0.1/hook", "url_not_allowed"},
		{acct.LiveKey, "https://10.0.0.1/hook", "url_not_allowed"},
		{acct.LiveKey, "https://169.254.169.254/latest/meta-data/", "url_not_allowed"},
		{acct.LiveKey, "https://[::1]/hook", "url_not_allowed"},
		{acct.LiveKey, "https://localhost/hook", "url_not_allowed"},
		{acct.LiveKey, "http://93.184.216.34/hook", "parameter_invalid"},
		{acct.TestKey, "http://10.0.0.1/hook", "url_not_allowed"},
	} {
		r := whCall(t, srv, "POST", "/v1/webhooks/endpoints", tt.key, map[string]any{"url": tt.url, "events": []string{"charge.paid"}})
		whWant(t, r, 400, tt.code)
		if r.param() != "url" {
			t.Fatalf("%s: param %q", tt.url, r.param())
		}
	}
	r := whCall(t, srv, "POST", "/v1/webhooks/endpoints", acct.LiveKey, map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"charge.paid"}})
	whWant(t, r, 201, "")
	id := r.str("id")
	whWant(t, whCall(t, srv, "PATCH", "/v1/webhooks/endpoints/"+id, acct.LiveKey, map[string]any{"url": "https://192.168.0.10/"}), 400, "url_not_allowed")
}

// A payment created with a webhookUrl gets its legacy events there, signed
// with the account's transaction-webhook secret of the payment's mode.
func TestPaymentWebhookURLDelivery(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja TX")
	rc := newWHReceiver(t)
	rc.secret = acct.TestTransactionWebhookSecret
	r := whCall(t, srv, "POST", "/v1/payments", acct.TestKey, map[string]any{
		"amount": 2500, "currency": "BRL", "paymentMethods": []string{"PIX"}, "idempotencyKey": "tx-webhook-0001",
		"webhookUrl": rc.srv.URL + "/tx",
	})
	whWant(t, r, 201, "")
	for range 3 {
		_, _ = srv.App.Webhooks.DispatchOnce(t.Context())
		_, _ = srv.App.Webhooks.DeliverOnce(t.Context())
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.bad != 0 || len(rc.bodies) == 0 {
		t.Fatalf("transaction webhook: %d verified, %d bad", len(rc.bodies), rc.bad)
	}
	for _, b := range rc.bodies {
		var env struct {
			Event string `json:"event"`
		}
		if json.Unmarshal(b, &env) != nil || !domain.EventType(env.Event).Legacy() {
			t.Fatalf("non-legacy event at the transaction url: %s", b)
		}
	}
}

// A live payment's webhookUrl obeys the endpoint rules at create: a
// private address is refused before anything is written.
func TestPaymentWebhookURLCheckedAtCreate(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{StrictWebhookURLs: true})
	acct := srv.NewAccount(t, "Loja SSRF")
	for _, u := range []string{"https://127.0.0.1:9/tx", "https://[::1]/tx", "https://10.0.0.1/tx", "https://169.254.169.254/latest"} {
		r := whCall(t, srv, "POST", "/v1/payments", acct.LiveKey, map[string]any{
			"amount": 2500, "paymentMethods": []string{"PIX"}, "idempotencyKey": "tx-ssrf-" + strings.Repeat("0", 4),
			"webhookUrl": u,
		})
		whWant(t, r, 400, "url_not_allowed")
		if p := r.Body["error"].(map[string]any)["param"]; p != "webhookUrl" {
			t.Errorf("%s: param %v, want webhookUrl", u, p)
		}
	}
	list := whCall(t, srv, "GET", "/v1/payments", acct.LiveKey, nil)
	if n := list.Body["total"]; n != float64(0) {
		t.Errorf("refused payments were written: total %v", n)
	}
}

// security.md, item 7: an account has at most 16 endpoints per mode, so one
// tenant cannot multiply the receivers in front of everyone else's.
func TestEndpointLimitPerAccount(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Muitos Ganchos")
	var ids []string
	for i := range app.MaxEndpoints {
		r := whCall(t, srv, "POST", "/v1/webhooks/endpoints", acct.TestKey, map[string]any{
			"url": fmt.Sprintf("http://93.184.216.34/hook-%d", i), "events": []string{"charge.paid"}})
		whWant(t, r, 201, "")
		ids = append(ids, r.str("id"))
	}
	over := map[string]any{"url": "http://93.184.216.34/hook-over", "events": []string{"charge.paid"}}
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", acct.TestKey, over), 400, "endpoint_limit_reached")
	// The other mode has its own budget; a deleted endpoint frees a place.
	live := map[string]any{"url": "https://93.184.216.34/hook-live", "events": []string{"charge.paid"}}
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", acct.LiveKey, live), 201, "")
	whWant(t, whCall(t, srv, "DELETE", "/v1/webhooks/endpoints/"+ids[0], acct.TestKey, nil), 200, "")
	whWant(t, whCall(t, srv, "POST", "/v1/webhooks/endpoints", acct.TestKey, over), 201, "")
}
