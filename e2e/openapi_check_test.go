package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testkit"
)

// TestContractCheckCatchesDrift proves the check is not a no-op: a fake
// server answering the way a drifted Quita would is caught on each count.
func TestContractCheckCatchesDrift(t *testing.T) {
	t.Parallel()
	const raw = "abcdefghijklmnopqrstuvwxyz"
	charge := func() map[string]any {
		return map[string]any{
			"id": "ch_" + raw, "object": "charge", "amount": 1000, "currency": "BRL", "status": "pending",
			"payment_method": "pix", "customer": map[string]any{}, "checkout_url": "http://x/checkout/" + raw,
			"settlement": map[string]any{}, "metadata": map[string]any{}, "created_at": "2026-11-24T12:00:00.000Z",
			"pix": map[string]any{"br_code": "000201", "qr_code_url": "http://x/checkout/" + raw + "/qr.png",
				"expires_at": "2026-11-24T13:00:00.000Z"},
		}
	}
	answer := func(status int, body any, noRequestID bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if !noRequestID {
				w.Header().Set("X-Request-Id", "req_"+raw)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(body)
		})
	}
	paidTx := func(paidWith any) map[string]any {
		tx := map[string]any{"id": "tx_" + raw, "status": "PAID", "amount": 1000, "currency": "BRL",
			"paymentMethods": []string{"PIX"}, "paidWith": paidWith, "paidAt": "2026-11-24T12:01:00.000Z",
			"providerFee": 5, "platformFee": 5, "netAmount": 990, "metadata": map[string]any{},
			"createdAt": "2026-11-24T12:00:00.000Z"}
		for _, k := range []string{"pixQrCode", "pixCopyPaste", "pixExpiresAt", "cardRedirectUrl", "mbEntity", "mbReference",
			"mbExpiresAt", "boletoBarcode", "boletoLine", "boletoPdfUrl", "boletoExpiresAt", "cryptoAddress",
			"cryptoNetwork", "cryptoCurrency", "cryptoAmount"} {
			tx[k] = nil
		}
		return tx
	}
	with := func(k string, v any) map[string]any { c := charge(); c[k] = v; return c }
	without := func(k string) map[string]any { c := charge(); delete(c, k); return c }
	envelope := map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "x", "message": "m"},
		"request_id": "req_" + raw}
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		body    any
		server  http.Handler
		wantErr string // "" expects no mismatch
	}{
		{"documented charge", "GET", "/v1/charges/ch_" + raw, nil, answer(200, charge(), false), ""},
		{"undocumented field", "GET", "/v1/charges/ch_" + raw, nil, answer(200, with("provider", "sandbox"), false), "provider"},
		{"missing field", "GET", "/v1/charges/ch_" + raw, nil, answer(200, without("checkout_url"), false), "checkout_url"},
		{"unknown enum value", "GET", "/v1/charges/ch_" + raw, nil, answer(200, with("status", "PAID"), false), "status"},
		{"wrong id prefix", "GET", "/v1/charges/ch_" + raw, nil, answer(200, with("id", "tx_"+raw), false), "id"},
		{"float amount", "GET", "/v1/charges/ch_" + raw, nil, answer(200, with("amount", 10.5), false), "amount"},
		{"no X-Request-Id", "GET", "/v1/charges/ch_" + raw, nil, answer(200, charge(), true), "X-Request-Id"},
		{"paid transaction", "GET", "/v1/payments/tx_" + raw, nil, answer(200, paidTx("PIX"), false), ""},
		{"paid transaction without paidWith", "GET", "/v1/payments/tx_" + raw, nil, answer(200, paidTx(nil), false), "paidWith"},
		{"undocumented status", "GET", "/v1/charges/ch_" + raw, nil, answer(418, envelope, false), "status is not supported"},
		{"error not in the envelope", "GET", "/v1/charges/ch_" + raw, nil, answer(404, map[string]any{"message": "no"}, false), "error"},
		{"invalid request accepted", "POST", "/v1/charges", map[string]any{"payment_method": "pix"},
			answer(201, charge(), false), "refuses"},
		{"invalid request refused", "POST", "/v1/charges", map[string]any{"payment_method": "pix"},
			answer(400, envelope, false), ""},
		{"undocumented route served", "GET", "/v1/secret-things", nil, answer(200, map[string]any{}, false), "not in the document"},
		{"unknown route refused", "GET", "/v1/secret-things", nil, answer(404, envelope, false), ""},
		{"outside /v1", "GET", "/checkout/" + raw, nil, answer(200, "<html>", false), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.server)
			defer srv.Close()
			// Its own checker: these mismatches are deliberate and stay
			// out of the suite's report.
			checker, err := newContractChecker()
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: contractTransport{next: http.DefaultTransport, checker: checker}}
			h := hdr{"apikey": "qt_test_x", "Idempotency-Key": "drift-check-key"}
			_, err = testkit.Send(client, tc.method, srv.URL+tc.path, tc.body, h)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("mismatch reported: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("no mismatch reported, want one about %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("mismatch %v, want one about %q", err, tc.wantErr)
			}
		})
	}
}
