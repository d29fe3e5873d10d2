package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/ports"
)

// TestDocumentedRefusals sends, for every operation, requests that break a
// rule the document states (a bound, an enum, a pattern, a required or
// unknown field, a credential) and relies on the contract check: the server
// must refuse each with a documented 4xx in the envelope. Each case must
// also be invalid per the document, so the table cannot rot into valid
// requests.
func TestDocumentedRefusals(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Recusas")
		checker, err := contract()
		if err != nil {
			t.Fatal(err)
		}
		ch := a.test.mustCreate(t, pixBody(1000))
		long := func(n int) string { return strings.Repeat("a", n) }
		noKey := hdr{"apikey": "-"}
		type tc struct {
			method, path string
			body         any
			h            hdr
		}
		key := func() hdr { return hdr{"Idempotency-Key": newKey()} }
		body := func(kv ...any) map[string]any {
			m := map[string]any{"amount": 1000, "payment_method": "pix"}
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == nil {
					delete(m, kv[i].(string))
				} else {
					m[kv[i].(string)] = kv[i+1]
				}
			}
			return m
		}
		payment := func(kv ...any) map[string]any {
			m := map[string]any{"amount": 1000, "paymentMethods": []string{"PIX"}, "idempotencyKey": newKey()}
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == nil {
					delete(m, kv[i].(string))
				} else {
					m[kv[i].(string)] = kv[i+1]
				}
			}
			return m
		}
		tx := "tx_" + ch.raw()
		cases := []tc{
			// Charges.
			{"GET", "/charges", nil, noKey},
			{"POST", "/charges", body(), nil},
			{"POST", "/charges", body(), hdr{"Idempotency-Key": "short"}},
			{"POST", "/charges", body(), hdr{"Idempotency-Key": long(129)}},
			{"POST", "/charges", body("amount", nil), key()},
			{"POST", "/charges", body("amount", 0), key()},
			{"POST", "/charges", body("amount", -5), key()},
			{"POST", "/charges", body("amount", 10.5), key()},
			{"POST", "/charges", body("amount", "1000"), key()},
			{"POST", "/charges", body("amount", int64(10_000_000_000_001)), key()},
			{"POST", "/charges", body("payment_method", nil), key()},
			{"POST", "/charges", body("payment_method", "card"), key()},
			{"POST", "/charges", body("currency", "USD"), key()},
			{"POST", "/charges", body("description", long(501)), key()},
			{"POST", "/charges", body("expires_in", 59), key()},
			{"POST", "/charges", body("expected_payer_tax_id", "52998224725"), key()},
			{"POST", "/charges", body("expected_payer_tax_id", "52998224725", "customer", map[string]any{"email": "a@example.com"}), key()},
			{"POST", "/charges", body("expires_in", "600"), key()},
			{"POST", "/charges", body("surprise", true), key()},
			{"POST", "/charges", body("customer", map[string]any{"email": "not-an-address"}), key()},
			{"POST", "/charges", body("customer", map[string]any{"cpf": "52998224725"}), key()},
			{"POST", "/charges", body("customer", map[string]any{"name": long(201)}), key()},
			{"POST", "/charges", body("customer", "Maria"), key()},
			{"POST", "/charges", body("metadata", "x"), key()},
			{"POST", "/charges", body("metadata", map[string]any{long(41): 1}), key()},
			{"POST", "/charges", `{"amount": 1000, "payment_method": "pix"`, key()},
			{"POST", "/charges", `{"amount": 1000, "payment_method": "pix"}`, hdr{"Idempotency-Key": newKey(), "Content-Type": "text/plain"}},
			{"POST", "/pix/charges", map[string]any{"amount": 1000, "payment_method": "boleto"}, key()},
			{"POST", "/pix/charges", map[string]any{}, key()},
			{"GET", "/charges?limit=0", nil, nil},
			{"GET", "/charges?limit=101", nil, nil},
			{"GET", "/charges?limit=ten", nil, nil},
			{"GET", "/charges?status=PAID", nil, nil},
			{"GET", "/charges?created_after=yesterday", nil, nil},
			{"GET", "/charges?starting_after=re_" + ch.raw(), nil, nil},
			{"GET", "/charges/" + ch.ID + "?include=everything", nil, nil},
			{"GET", "/charges/ch_nope", nil, nil},
			{"POST", "/charges/" + ch.ID, map[string]any{"amount": 2000}, nil},
			{"POST", "/charges/" + ch.ID, map[string]any{"days_after_due": "ten"}, nil},
			{"POST", "/charges/" + ch.ID, map[string]any{"fine": map[string]any{"type": "fixed", "amount": 1, "rate": 5}}, nil},
			{"POST", "/test_helpers/charges/" + ch.ID + "/pay", map[string]any{"amount": "1000"}, nil},
			{"POST", "/test_helpers/charges/" + ch.ID + "/pay", map[string]any{"payer": "x"}, nil},
			{"POST", "/test_helpers/charges/" + ch.ID + "/expire", map[string]any{"now": true}, nil},

			// Payments.
			{"POST", "/payments", payment("idempotencyKey", "short"), nil},
			{"POST", "/payments", payment("paymentMethods", []string{}), nil},
			{"POST", "/payments", payment("paymentMethods", []string{"PAYPAL"}), nil},
			{"POST", "/payments", payment("paymentMethods", "PIX"), nil},
			{"POST", "/payments", payment("currency", "TOOLONGXX"), nil},
			{"POST", "/payments", payment("currency", "R$"), nil},
			{"POST", "/payments", payment("customerEmail", "nope"), nil},
			{"POST", "/payments", payment("customerName", long(201)), nil},
			{"POST", "/payments", payment("amount", 0), nil},
			{"POST", "/payments", payment("payment_method", "pix"), nil},
			{"POST", "/payments", payment("currency", "EUR"), nil},
			{"POST", "/payments", payment("paymentMethods", []string{"MULTIBANCO"}), nil},
			{"POST", "/payments", payment("paymentMethods", []string{"MBWAY"}, "currency", "EUR"), nil},
			{"POST", "/payments", payment("paymentMethods", []string{"MBWAY"}, "currency", "EUR",
				"metadata", map[string]any{"phone": "912345678"}), nil},
			{"GET", "/payments?page=0", nil, nil},
			{"GET", "/payments?limit=101", nil, nil},
			{"GET", "/payments?status=paid", nil, nil},
			{"GET", "/payments?sortOrder=up", nil, nil},
			{"GET", "/payments?sortBy=secret", nil, nil},
			{"GET", "/payments?startDate=soon", nil, nil},
			{"GET", "/payments/stats?days=0", nil, nil},
			{"GET", "/payments/stats?days=367", nil, nil},
			{"GET", "/payments/metrics?days=abc", nil, nil},
			{"GET", "/payments/metrics?currency=R$", nil, nil},
			{"GET", "/payments/not-an-id", nil, nil},
			{"POST", "/payments/" + tx + "/refund", map[string]any{"idempotencyKey": newKey(), "amount": 0}, nil},
			{"POST", "/payments/" + tx + "/refund", map[string]any{"idempotencyKey": newKey(), "reason": long(501)}, nil},
			{"POST", "/payments/" + tx + "/refund", map[string]any{"idempotencyKey": newKey(), "strategy": "wire"}, nil},
			{"POST", "/payments/" + tx + "/refund", map[string]any{"idempotencyKey": newKey(), "passFeeToTenant": "yes"}, nil},
			{"POST", "/payments/" + tx + "/refund", map[string]any{"idempotencyKey": newKey(), "note": "x"}, nil},
			{"POST", "/payments/" + tx + "/cancel", map[string]any{"reason": "x"}, nil},
			{"POST", "/test_helpers/payments/" + tx + "/transition", map[string]any{}, nil},
			{"POST", "/test_helpers/payments/" + tx + "/transition", map[string]any{"status": "NOPE"}, nil},
			{"POST", "/test_helpers/payments/" + tx + "/transition", map[string]any{"status": "PAID", "paidWith": "PAYPAL"}, nil},
			{"POST", "/test_helpers/refunds/nope/fail", nil, nil},
			{"GET", "/wallets/balance?currency=X", nil, nil},

			// Events.
			{"GET", "/events?wait=26", nil, nil},
			{"GET", "/events?type=nope", nil, nil},
			{"GET", "/events?limit=0", nil, nil},
			{"GET", "/events?starting_after=" + ch.ID, nil, nil},
			{"GET", "/events/" + ch.ID, nil, nil},

			// Payouts.
			{"POST", "/payouts", map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "joana@example.com"}}, nil},
			{"POST", "/payouts", map[string]any{"amount": 0, "destination": map[string]any{"pix_key": "joana@example.com"}}, key()},
			{"POST", "/payouts", map[string]any{"amount": 100, "currency": "USD", "destination": map[string]any{"pix_key": "joana@example.com"}}, key()},
			{"POST", "/payouts", map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "joana@example.com", "type": "iban"}}, key()},
			{"POST", "/payouts", map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "joana@example.com", "bank": "x"}}, key()},
			{"POST", "/payouts", map[string]any{"amount": 100, "description": long(141), "destination": map[string]any{"pix_key": "joana@example.com"}}, key()},
			{"GET", "/payouts?limit=0", nil, nil},
			{"GET", "/payouts?status=done", nil, nil},
			{"GET", "/payouts/" + ch.ID, nil, nil},

			// Webhooks.
			{"POST", "/webhooks/endpoints", map[string]any{"events": []string{"charge.paid"}}, nil},
			{"POST", "/webhooks/endpoints", map[string]any{"url": "https://example.com/h", "events": []string{}}, nil},
			{"POST", "/webhooks/endpoints", map[string]any{"url": "https://example.com/h", "events": []string{"charge.nope"}}, nil},
			{"POST", "/webhooks/endpoints", map[string]any{"url": "https://example.com/h"}, nil},
			{"POST", "/webhooks/endpoints", map[string]any{"url": "https://example.com/h", "events": []string{"charge.paid"}, "secret": "x"}, nil},
			{"PATCH", "/webhooks/endpoints/we_" + ch.raw(), map[string]any{"status": "PAUSED"}, nil},
			{"PATCH", "/webhooks/endpoints/we_" + ch.raw(), map[string]any{"colour": "red"}, nil},
			{"PATCH", "/webhooks/endpoints/nope", map[string]any{"status": "ACTIVE"}, nil},
			{"DELETE", "/webhooks/endpoints/nope", nil, nil},
			{"POST", "/webhooks/endpoints/we_" + ch.raw() + "/rotate-secret", map[string]any{"secret": "x"}, nil},
			{"GET", "/webhooks/deliveries?status=DONE", nil, nil},
			{"GET", "/webhooks/deliveries?eventType=charge.nope", nil, nil},
			{"GET", "/webhooks/deliveries?limit=0", nil, nil},
			{"GET", "/webhooks/deliveries?offset=-1", nil, nil},
			{"POST", "/webhooks/transaction-secret/rotate", nil, noKey},

			// Dashboard.
			{"POST", "/auth/login", map[string]any{"email": "a@example.com"}, noKey},
			{"POST", "/auth/login", map[string]any{"email": "", "password": "x"}, noKey},
			{"POST", "/auth/login", map[string]any{"email": "a@example.com", "password": "x", "otp": "1"}, noKey},
			{"POST", "/api-keys", map[string]any{"label": "x"}, nil},
			{"GET", "/api-keys", nil, noKey},
			{"GET", "/audit-logs", nil, hdr{"apikey": "-", "Authorization": "Basic eDp5"}},
			{"POST", "/auth/logout", nil, noKey},
		}
		for _, c := range cases {
			raw, _ := c.body.(string)
			if c.body != nil && raw == "" {
				enc, _ := json.Marshal(c.body)
				raw = string(enc)
			}
			req, _ := http.NewRequest(c.method, e.srv.BaseURL+c.path, bytes.NewReader([]byte(raw)))
			if c.body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			req.Header.Set("apikey", a.TestKey)
			for k, v := range c.h {
				if v == "-" {
					req.Header.Del(k)
				} else {
					req.Header.Set(k, v)
				}
			}
			if checker.requestError(req, []byte(raw)) == nil {
				t.Errorf("%s %s %s: valid per the document; the case tests nothing", c.method, c.path, raw)
				continue
			}
			// The contract check fails the exchange unless it is refused
			// with a documented 4xx.
			a.test.do(t, c.method, c.path, c.body, c.h)
		}

		// A body over 1 MiB is 413; past the key's burst, 429 with
		// Retry-After and the RateLimit headers (checked by the contract).
		big := map[string]any{"amount": 1000, "payment_method": "pix", "description": strings.Repeat("x", 1<<20)}
		a.test.do(t, "POST", "/charges", big, key()).apiErr(t, 413, "request_too_large", "")
		err = e.srv.App.Dashboard.GuardSettings.Set(context.Background(), a.AccountID,
			ports.AccountSettings{RateLimitPerSecond: 1, RateLimitBurst: 2})
		if err != nil {
			t.Fatal(err)
		}
		limited := false
		for range 20 {
			if r := a.test.do(t, "GET", "/wallets", nil, nil); r.Status == 429 {
				r.apiErr(t, 429, "rate_limited", "")
				limited = true
				break
			}
		}
		if !limited {
			t.Error("never rate limited")
		}
	})
}
