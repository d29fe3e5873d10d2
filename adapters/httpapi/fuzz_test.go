package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quitapix/quita/quitatest"
)

// Whatever body a merchant sends to the financial writes, the answer is a
// JSON document and never a 5xx: bad input is the merchant's error, named
// in the envelope.
func FuzzCreateBodies(f *testing.F) {
	for _, seed := range []string{
		`{"amount":1990,"payment_method":"pix"}`,
		`{"amount":1990,"payment_method":"pix","customer":{"name":"A","document":"529.982.247-25"},"expected_payer_tax_id":"52998224725"}`,
		`{"amount":-1}`, `{"amount":1e3}`, `{"amount":"10"}`, `{"amount":99999999999999999999}`,
		`{"amount":100,"payment_method":"pix","metadata":{"a":[1,{"b":null}],"_x":1}}`,
		`{"amount":100,"payment_method":"pix","expires_in":-5,"description":"\u0000"}`,
		`{"amount":100,"paymentMethods":["PIX","BOLETO"],"idempotencyKey":"fuzz-key-0001"}`,
		`{"amount":100,"paymentMethods":["MBWAY"],"currency":"EUR","metadata":{"phone":"+351912345678"},"idempotencyKey":"fuzz-key-0002"}`,
		`{"amount":100,"paymentMethods":[],"idempotencyKey":"x"}`, `[]`, `null`, `{`, `""`, `{"amount":100}{}`,
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	srv := quitatest.NewServer(f, quitatest.Options{})
	acct := srv.NewAccount(f, "Loja Fuzz")
	handler := srv.App.Handler
	f.Fuzz(func(t *testing.T, body string, payments bool) {
		path := "/v1/charges"
		if payments {
			path = "/v1/payments"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("apikey", acct.TestKey)
		req.Header.Set("Content-Type", "application/json")
		// A key per body, so each input reaches the create path instead of
		// the 409 of a reused key.
		sum := sha256.Sum256([]byte(body))
		req.Header.Set("Idempotency-Key", "fuzz-"+hex.EncodeToString(sum[:8]))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q → %d %s", path, body, rec.Code, rec.Body)
		}
		if !json.Valid(bytes.TrimSpace(rec.Body.Bytes())) {
			t.Fatalf("POST %s %q → %d with a non-JSON body %q", path, body, rec.Code, rec.Body)
		}
	})
}
