package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// The access log writes one line per request: its id, method, route
// template (never the path's ids or the query), status and duration, and
// for an API key its account, mode and fingerprint — never the key.
func TestRequestLogLine(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	r := mux.NewRouter()
	r.Use(requestLog(log, nil, nil))
	r.HandleFunc("/v1/charges/{id}", func(w http.ResponseWriter, r *http.Request) {
		stateOf(r.Context()).rec = &ports.APIKeyRecord{AccountID: "acct_log", Mode: domain.ModeLive, Fingerprint: "fp_log"}
		w.WriteHeader(http.StatusTeapot)
	})
	req := httptest.NewRequest(http.MethodGet, "/v1/charges/chg_secretish?apikey=qk_live_leak", nil)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)

	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q (%v)", buf.String(), err)
	}
	want := map[string]any{"msg": "request", "level": "INFO", "request_id": w.Header().Get("X-Request-Id"), "method": "GET",
		"route": "/v1/charges/{id}", "status": float64(http.StatusTeapot), "account": "acct_log", "mode": "live",
		"key_fingerprint": "fp_log"}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, line[k], v, buf.String())
		}
	}
	if d, ok := line["duration_ms"].(float64); !ok || d < 0 {
		t.Errorf("duration_ms = %v", line["duration_ms"])
	}
	if s := buf.String(); strings.Contains(s, "chg_secretish") || strings.Contains(s, "qk_live_leak") {
		t.Errorf("the line carries the path's id or the query: %s", s)
	}
	if _, ok := line["error_code"]; ok {
		t.Errorf("a request answered without an error envelope logs an error_code: %s", buf.String())
	}

	// An answer in the error envelope logs its code.
	buf.Reset()
	r.HandleFunc("/v1/refused", func(w http.ResponseWriter, r *http.Request) { writeError(w, r, ports.ErrNotFound) })
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/refused", nil))
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["error_code"] != "resource_not_found" || line["status"] != float64(404) {
		t.Errorf("an error's line: %s (%v)", buf.String(), err)
	}
}
