package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Every invalid create is a 400 (413 for a huge body) in the error
// envelope, naming the param; nothing is created.
func TestCreateValidation(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Valida")
		lock := func(expected, document, name string) map[string]any {
			cust := map[string]any{}
			if document != "" {
				cust["document"] = document
			}
			if name != "" {
				cust["name"] = name
			}
			return map[string]any{"amount": 100, "payment_method": "pix", "customer": cust, "expected_payer_tax_id": expected}
		}
		big := `{"amount":100,"payment_method":"pix","metadata":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`
		cases := []struct {
			name   string
			path   string // default /charges
			body   any
			h      hdr
			status int    // default 400
			code   string // "" = any
			param  string
		}{
			{name: "amount missing", body: `{"payment_method":"pix"}`, code: "parameter_missing", param: "amount"},
			{name: "amount null", body: `{"amount":null,"payment_method":"pix"}`, code: "parameter_missing", param: "amount"},
			{name: "amount zero", body: `{"amount":0,"payment_method":"pix"}`, code: "parameter_invalid", param: "amount"},
			{name: "amount negative", body: `{"amount":-100,"payment_method":"pix"}`, code: "parameter_invalid", param: "amount"},
			{name: "amount fraction", body: `{"amount":1.5,"payment_method":"pix"}`, code: "parameter_invalid", param: "amount"},
			{name: "amount exponent", body: `{"amount":1e3,"payment_method":"pix"}`, code: "parameter_invalid", param: "amount"},
			{name: "amount string", body: `{"amount":"10","payment_method":"pix"}`, code: "parameter_invalid", param: "amount"},
			{name: "amount overflow", body: `{"amount":99999999999999999999,"payment_method":"pix"}`, code: "parameter_invalid", param: "amount"},
			{name: "amount too large", body: `{"amount":10000000000001,"payment_method":"pix"}`, code: "parameter_invalid", param: "amount"},
			{name: "currency USD", body: `{"amount":100,"currency":"USD","payment_method":"pix"}`, code: "parameter_invalid", param: "currency"},
			{name: "currency usd", body: `{"amount":100,"currency":"usd","payment_method":"pix"}`, code: "parameter_invalid", param: "currency"},
			{name: "currency number", body: `{"amount":100,"currency":986,"payment_method":"pix"}`, code: "parameter_invalid", param: "currency"},
			{name: "payment_method missing", body: `{"amount":100}`, code: "parameter_missing", param: "payment_method"},
			{name: "payment_method card", body: `{"amount":100,"payment_method":"card"}`, code: "parameter_invalid", param: "payment_method"},
			{name: "payment_method PIX", body: `{"amount":100,"payment_method":"PIX"}`, code: "parameter_invalid", param: "payment_method"},
			{name: "shortcut with card", path: "/pix/charges", body: `{"amount":100,"payment_method":"card"}`, code: "parameter_invalid", param: "payment_method"},
			{name: "description 501", body: map[string]any{"amount": 100, "payment_method": "pix", "description": strings.Repeat("é", 501)}, code: "parameter_invalid", param: "description"},
			{name: "expires_in 59", body: `{"amount":100,"payment_method":"pix","expires_in":59}`, code: "parameter_invalid", param: "expires_in"},
			{name: "expires_in 0", body: `{"amount":100,"payment_method":"pix","expires_in":0}`, code: "parameter_invalid", param: "expires_in"},
			{name: "expires_in negative", body: `{"amount":100,"payment_method":"pix","expires_in":-60}`, code: "parameter_invalid", param: "expires_in"},
			{name: "expires_in string", body: `{"amount":100,"payment_method":"pix","expires_in":"3600"}`, code: "parameter_invalid", param: "expires_in"},
			{name: "Idempotency-Key missing", body: pixBody(100), h: hdr{"Idempotency-Key": "-"}, code: "idempotency_key_missing", param: "Idempotency-Key"},
			{name: "Idempotency-Key 7 chars", body: pixBody(100), h: hdr{"Idempotency-Key": "1234567"}, param: "Idempotency-Key"},
			{name: "Idempotency-Key 129 chars", body: pixBody(100), h: hdr{"Idempotency-Key": strings.Repeat("k", 129)}, param: "Idempotency-Key"},
			{name: "lock without customer.name", body: lock("52998224725", "", ""), param: "customer.name"},
			{name: "lock with blank customer.name", body: lock("52998224725", "", "   "), param: "customer.name"},
			{name: "lock bad CPF checksum", body: lock("52998224724", "", "Ana"), code: "parameter_invalid", param: "expected_payer_tax_id"},
			{name: "lock bad CNPJ checksum", body: lock("11.444.777/0001-62", "", "Ana"), code: "parameter_invalid", param: "expected_payer_tax_id"},
			{name: "lock 10 digits", body: lock("1234567890", "", "Ana"), code: "parameter_invalid", param: "expected_payer_tax_id"},
			{name: "lock same digits", body: lock("11111111111", "", "Ana"), code: "parameter_invalid", param: "expected_payer_tax_id"},
			{name: "lock differs from document", body: lock("52998224725", "111.444.777-35", "Ana"), code: "parameter_invalid", param: "expected_payer_tax_id"},
			{name: "lock number", body: `{"amount":100,"payment_method":"pix","customer":{"name":"Ana"},"expected_payer_tax_id":52998224725}`, code: "parameter_invalid", param: "expected_payer_tax_id"},
			{name: "customer.document invalid", body: map[string]any{"amount": 100, "payment_method": "pix", "customer": map[string]any{"document": "123"}}, code: "parameter_invalid", param: "customer.document"},
			{name: "customer.email invalid", body: map[string]any{"amount": 100, "payment_method": "pix", "customer": map[string]any{"email": "not-an-email"}}, code: "parameter_invalid", param: "customer.email"},
			{name: "customer.email no domain dot", body: map[string]any{"amount": 100, "payment_method": "pix", "customer": map[string]any{"email": "ana@localhost"}}, code: "parameter_invalid", param: "customer.email"},
			{name: "customer.email display name", body: map[string]any{"amount": 100, "payment_method": "pix", "customer": map[string]any{"email": "Ana <ana@example.com>"}}, code: "parameter_invalid", param: "customer.email"},
			{name: "customer.name number", body: `{"amount":100,"payment_method":"pix","customer":{"name":5}}`, code: "parameter_invalid", param: "customer.name"},
			{name: "customer string", body: `{"amount":100,"payment_method":"pix","customer":"Ana"}`, code: "parameter_invalid", param: "customer"},
			{name: "metadata array", body: `{"amount":100,"payment_method":"pix","metadata":[1]}`, code: "parameter_invalid", param: "metadata"},
			{name: "unknown field", body: `{"amount":100,"payment_method":"pix","amount_cents":100}`, code: "parameter_unknown", param: "amount_cents"},
			{name: "unknown nested field", body: `{"amount":100,"payment_method":"pix","customer":{"cpf":"52998224725"}}`, code: "parameter_unknown", param: "customer.cpf"},
			{name: "malformed JSON", body: `{"amount":100,`, code: "body_invalid"},
			{name: "not JSON", body: `amount=100`, code: "body_invalid"},
			{name: "trailing data", body: `{"amount":100,"payment_method":"pix"} {}`, code: "body_invalid"},
			{name: "NUL in a description", body: `{"amount":100,"payment_method":"pix","description":"a\u0000b"}`, code: "body_invalid"},
			{name: "NUL in metadata", body: `{"amount":100,"payment_method":"pix","metadata":{"k\u0000":"v"}}`, code: "body_invalid"},
			{name: "array body", body: `[{"amount":100}]`},
			{name: "empty body", body: ``, code: "body_missing"},
			{name: "body over 1 MiB", body: big, status: http.StatusRequestEntityTooLarge, code: "request_too_large"},
			{name: "Content-Type text/plain", body: pixBody(100), h: hdr{"Content-Type": "text/plain"}, code: "content_type_invalid", param: "Content-Type"},
			{name: "Content-Type missing", body: pixBody(100), h: hdr{"Content-Type": "-"}, code: "content_type_invalid", param: "Content-Type"},
			{name: "Content-Type form", body: `amount=100`, h: hdr{"Content-Type": "application/x-www-form-urlencoded"}, code: "content_type_invalid", param: "Content-Type"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				path := tc.path
				if path == "" {
					path = "/charges"
				}
				h := hdr{"Idempotency-Key": newKey()}
				for k, v := range tc.h {
					h[k] = v
				}
				status := tc.status
				if status == 0 {
					status = http.StatusBadRequest
				}
				env := a.test.do(t, http.MethodPost, path, tc.body, h).apiErr(t, status, tc.code, tc.param)
				if env.Error.Type != "invalid_request_error" {
					t.Errorf("error.type %q, want invalid_request_error", env.Error.Type)
				}
			})
		}
		if n := e.countRows(t, "charges", a.AccountID); n != 0 {
			t.Errorf("invalid requests created %d charges", n)
		}

		// The boundaries and the lenient forms are accepted.
		ok := []struct {
			name string
			body any
			h    hdr
			path string
		}{
			{name: "description 500", body: map[string]any{"amount": 100, "payment_method": "pix", "description": strings.Repeat("é", 500)}},
			{name: "expires_in 60", body: map[string]any{"amount": 100, "payment_method": "pix", "expires_in": 60}},
			{name: "amount 1", body: pixBody(1)},
			{name: "Idempotency-Key 8 chars", body: pixBody(100), h: hdr{"Idempotency-Key": "12345678"}},
			{name: "Idempotency-Key 128 chars", body: pixBody(100), h: hdr{"Idempotency-Key": strings.Repeat("q", 128)}},
			{name: "Content-Type with charset", body: pixBody(100), h: hdr{"Content-Type": "application/json; charset=utf-8"}},
			{name: "CPF lock with punctuation", body: lock("529.982.247-25", "52998224725", "Ana")},
			{name: "CNPJ lock case and punctuation", body: lock("12.abc.345/01de-35", "12ABC34501DE35", "Ana")},
			{name: "CNPJ lock other way round", body: lock("12ABC34501DE35", "12.abc.345/01de-35", "Ana")},
			{name: "lock without document", body: lock("11.444.777/0001-61", "", "Ana")},
			{name: "shortcut without payment_method", path: "/pix/charges", body: map[string]any{"amount": 100}},
			{name: "shortcut with pix", path: "/pix/charges", body: map[string]any{"amount": 100, "payment_method": "pix"}},
		}
		for _, tc := range ok {
			t.Run("accepts "+tc.name, func(t *testing.T) {
				h := hdr{"Idempotency-Key": newKey()}
				for k, v := range tc.h {
					h[k] = v
				}
				path := tc.path
				if path == "" {
					path = "/charges"
				}
				a.test.do(t, http.MethodPost, path, tc.body, h).want(t, http.StatusCreated)
			})
		}

		t.Run("expires_in above the maximum is capped", func(t *testing.T) {
			c := a.test.mustCreate(t, map[string]any{"amount": 100, "payment_method": "pix", "expires_in": 86401})
			if d := c.Pix.ExpiresAt.Sub(c.CreatedAt.Truncate(time.Second)); d != 86400*time.Second {
				t.Errorf("expires_at − created_at = %v, want 86400s", d)
			}
			c = a.test.mustCreate(t, map[string]any{"amount": 100, "payment_method": "pix", "expires_in": 10_000_000})
			if d := c.Pix.ExpiresAt.Sub(c.CreatedAt.Truncate(time.Second)); d != 86400*time.Second {
				t.Errorf("expires_at − created_at = %v, want 86400s", d)
			}
			c = a.test.mustCreate(t, pixBody(100))
			if d := c.Pix.ExpiresAt.Sub(c.CreatedAt.Truncate(time.Second)); d != 3600*time.Second {
				t.Errorf("default window: expires_at − created_at = %v, want 3600s", d)
			}
		})
	})
}

// A missing or invalid apikey is 401 on every route, never 404.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Auth")
		c := a.test.mustCreate(t, pixBody(100))
		unknown := "ch_" + strings.Repeat("a", len(c.raw()))
		// A well-formed key of the right shape that was never issued.
		forged := a.TestKey[:len(a.TestKey)-4] + "zzzz"
		if forged == a.TestKey {
			forged = a.TestKey[:len(a.TestKey)-4] + "yyyy"
		}
		routes := []struct {
			method, path string
			body         any
		}{
			{http.MethodPost, "/charges", pixBody(100)},
			{http.MethodPost, "/pix/charges", pixBody(100)},
			{http.MethodGet, "/charges", nil},
			{http.MethodGet, "/charges/" + c.ID, nil},
			{http.MethodGet, "/charges/" + unknown, nil},
			{http.MethodGet, "/charges/not-an-id", nil},
			{http.MethodPost, "/test_helpers/charges/" + c.ID + "/pay", nil},
			{http.MethodPost, "/test_helpers/charges/" + unknown + "/expire", nil},
		}
		for _, key := range []struct{ name, value string }{
			{"missing", ""}, {"garbage", "not-a-key"}, {"forged", forged}, {"bearer form", "Bearer " + a.TestKey},
		} {
			for _, rt := range routes {
				t.Run(key.name+" "+rt.method+" "+rt.path, func(t *testing.T) {
					cl := e.client(key.value)
					r := cl.do(t, rt.method, rt.path, rt.body, hdr{"Idempotency-Key": newKey()})
					env := r.apiErr(t, http.StatusUnauthorized, "", "")
					if env.Error.Type != "authentication_error" {
						t.Errorf("error.type %q, want authentication_error", env.Error.Type)
					}
				})
			}
		}
		// Authorization: Bearer is not the charges API's header.
		r := e.client("").do(t, http.MethodGet, "/charges/"+c.ID, nil, hdr{"Authorization": "Bearer " + a.TestKey})
		r.apiErr(t, http.StatusUnauthorized, "", "")
		// With a valid key, unknown ids are 404.
		a.test.get(t, unknown).apiErr(t, http.StatusNotFound, "resource_not_found", "")
		a.test.get(t, "not-an-id").apiErr(t, http.StatusNotFound, "resource_not_found", "")
	})
}
