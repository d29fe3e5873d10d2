package httpapi_test

import (
	"testing"
)

// TestPaymentsTakeTheIdempotencyKeyHeader: the payments surface's writes
// take their key from the Idempotency-Key header as the charges surface
// does, or from the body's idempotencyKey; a retry under the header
// replays, the same key in both is one key, and two different keys are
// refused before anything is written. SQLite.
func TestPaymentsTakeTheIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	e := newPayEnv(t, payDialects[0].dsn(t))
	body := map[string]any{"amount": 2500, "currency": "BRL", "paymentMethods": []string{"PIX"}}
	first := e.as("POST", "/payments", e.acct.TestKey, "", body, "Idempotency-Key", "header-key-0001")
	e.want(first, 201, "")
	again := e.as("POST", "/payments", e.acct.TestKey, "", body, "Idempotency-Key", "header-key-0001")
	if again.Status != first.Status || again.str("id") != first.str("id") {
		t.Fatalf("a retry under the header made another payment: %s then %s", first.Raw, again.Raw)
	}
	both := map[string]any{"amount": 2500, "currency": "BRL", "paymentMethods": []string{"PIX"}, "idempotencyKey": "both-key-0001"}
	e.want(e.as("POST", "/payments", e.acct.TestKey, "", both, "Idempotency-Key", "both-key-0001"), 201, "")
	differ := map[string]any{"amount": 2500, "currency": "BRL", "paymentMethods": []string{"PIX"}, "idempotencyKey": "body-key-0002"}
	if r := e.as("POST", "/payments", e.acct.TestKey, "", differ, "Idempotency-Key", "header-key-0002"); r.Status != 400 ||
		r.code() != "idempotency_key_mismatch" || r.param() != "Idempotency-Key" {
		t.Errorf("two keys: %s", r.Raw)
	}
	if r := e.as("POST", "/payments", e.acct.TestKey, "", body, "Idempotency-Key", "short"); r.code() != "idempotency_key_invalid" || r.param() != "Idempotency-Key" {
		t.Errorf("a short header key: %s", r.Raw)
	}
	if r := e.as("POST", "/payments", e.acct.TestKey, "", body); r.code() != "idempotency_key_missing" || r.param() != "idempotencyKey" {
		t.Errorf("no key at all: %s", r.Raw)
	}
	if l := e.as("GET", "/payments?limit=10", e.acct.TestKey, "", nil); l.num("total") != 2 {
		t.Errorf("payments written: %s, want 2", l.Raw)
	}

	// A refund under the header, retried, is one refund.
	e.payPix(first.str("id"))
	path := "/payments/" + first.str("id") + "/refund"
	r1 := e.as("POST", path, e.acct.TestKey, "", map[string]any{"amount": 100}, "Idempotency-Key", "refund-key-0001")
	r2 := e.as("POST", path, e.acct.TestKey, "", map[string]any{"amount": 100}, "Idempotency-Key", "refund-key-0001")
	e.want(r1, 201, "")
	if r2.str("id") != r1.str("id") {
		t.Errorf("a refund retried under the header: %s then %s", r1.Raw, r2.Raw)
	}
}
