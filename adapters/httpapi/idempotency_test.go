package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// The charges surface takes the key in the Idempotency-Key header, the
// payments surface in the idempotencyKey body field: one rule for both
// (8 to 128 characters, counted as characters, not bytes).
func TestIdempotencyKeyRuleIsTheSameOnBothWireFormats(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Chaves")

	formats := []struct {
		name, param string
		send        func(key string) *testkit.Response
	}{
		{"header", "Idempotency-Key", func(key string) *testkit.Response {
			h := testkit.Header{"apikey": acct.TestKey, "Idempotency-Key": key}
			if key == "" {
				h["Idempotency-Key"] = "-"
			}
			return testkit.Do(t, http.MethodPost, srv.BaseURL+"/charges", map[string]any{"amount": 100, "payment_method": "pix"}, h)
		}},
		{"body", "idempotencyKey", func(key string) *testkit.Response {
			body := map[string]any{"amount": 100, "paymentMethods": []string{"PIX"}}
			if key != "" {
				body["idempotencyKey"] = key
			}
			return testkit.Do(t, http.MethodPost, srv.BaseURL+"/payments", body, testkit.Header{"apikey": acct.TestKey})
		}},
	}
	// Keys are scoped to the account, not the route: the accepted cases
	// start with the format's own letter so the two formats never share one.
	cases := []struct {
		name   string
		key    func(first string) string
		code   string // "" = accepted (201)
		header bool   // only the header can carry bytes that are not UTF-8
	}{
		{name: "missing", key: func(string) string { return "" }, code: "idempotency_key_missing"},
		{name: "7 characters", key: func(f string) string { return f + "bcdefg" }, code: "idempotency_key_invalid"},
		{name: "129 characters", key: func(f string) string { return f + strings.Repeat("k", 128) }, code: "idempotency_key_invalid"},
		{name: "4 two-byte characters (8 bytes)", key: func(string) string { return "çççç" }, code: "idempotency_key_invalid"},
		{name: "invalid UTF-8", key: func(f string) string { return f + "\xff\xfeabcdefg" }, code: "idempotency_key_invalid", header: true},
		{name: "8 characters", key: func(f string) string { return f + "bcdefgh" }},
		{name: "128 characters, two bytes each but the first", key: func(f string) string { return f + strings.Repeat("ç", 127) }},
	}
	for _, f := range formats {
		for _, c := range cases {
			if c.header && f.name != "header" {
				continue
			}
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				r := f.send(c.key(f.name[:1]))
				if c.code == "" {
					r.Want(t, http.StatusCreated)
					return
				}
				e := r.Error()
				if r.Status != http.StatusBadRequest || e.Code != c.code || e.Param != f.param {
					t.Fatalf("got %d %s param %q, want 400 %s param %q: %s", r.Status, e.Code, e.Param, c.code, f.param, r.Body)
				}
			})
		}
	}
}
