package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"
)

// BenchmarkAdmittedCreateBody is the HTTP layer's share of a payment
// create: the access log, the admission limiter (which reads the body
// before it takes a place) and the strict decode of a 300-byte body, with
// the app's work left out. It measures what reading ahead costs the hot
// path (docs/performance.md, "Overload: admission control and shedding").
func BenchmarkAdmittedCreateBody(b *testing.B) {
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 64})
	r := mux.NewRouter()
	r.Use(requestLog(slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil), adm.middleware)
	r.HandleFunc("/v1/payments", handle(func(w http.ResponseWriter, r *http.Request) (any, error) {
		var req createPaymentRequest
		if _, err := readKeyedJSON(w, r, &req); err != nil {
			return nil, err
		}
		return nil, nil
	})).Methods(http.MethodPost).Name("payments.create")
	body := []byte(`{"amount":1990,"currency":"BRL","paymentMethods":["PIX"],"customerName":"Maria da Silva",` +
		`"customerDocument":"52998224725","customerEmail":"maria@example.com","metadata":{"order":"A-10293","channel":"web"},` +
		`"idempotencyKey":"bench-2f6c1a9e-5d3b-4c8e-9a71-0e4b2d6f8c13","customerId":"cus_000123"}`)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/payments", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
