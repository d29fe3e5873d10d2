package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/adapters/idempotency"
)

// A keyed POST that runs longer than its claim's lifetime keeps its key:
// the claim is renewed while the handler runs, so a retry under the same
// key meanwhile is told the key is in use instead of running the write a
// second time; once the first answers, the retry replays it. (Real time:
// the claim lives keyedLockTTL, renewed every keyedRenewEvery.)
func TestKeyedWriteClaimOutlivesItsTTLWhileRunning(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	release := make(chan struct{})
	letGo := sync.OnceFunc(func() { close(release) })
	defer letGo() // a failed check must not leave the first run waiting
	r := mux.NewRouter()
	r.Use(keyedWrites(idempotency.NewMemory(nil), func(*http.Request) string { return "test-scope" },
		slog.New(slog.NewTextHandler(io.Discard, nil))))
	r.HandleFunc("/v1/webhooks/endpoints", func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			<-release // only the first run waits
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"we_slow"}`)
	}).Methods(http.MethodPost).Name("endpoints.create")
	send := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/v1/webhooks/endpoints", strings.NewReader(`{"url":"https://x.example"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "slow-endpoint-0001")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w
	}
	first := make(chan *httptest.ResponseRecorder, 1)
	go func() { first <- send() }()
	time.Sleep(keyedLockTTL + keyedLockTTL/4) // past the claim's own lifetime
	if w := send(); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "idempotency_key_in_use") {
		t.Fatalf("a retry while the first runs past the claim's TTL: %d %s, want 409 idempotency_key_in_use", w.Code, w.Body)
	}
	letGo()
	if w := <-first; w.Code != http.StatusCreated {
		t.Fatalf("the first: %d %s", w.Code, w.Body)
	}
	if w := send(); w.Code != http.StatusCreated || w.Header().Get("Idempotent-Replayed") != "true" || w.Body.String() != `{"id":"we_slow"}` {
		t.Fatalf("the retry after it: %d %v %s, want the first answer replayed", w.Code, w.Header(), w.Body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the write ran %d times, want once", n)
	}
}
