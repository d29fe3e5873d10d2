package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRawClientReadsWhatTheFiguresNeed: the load generator's client
// sends what a merchant would (method, path under the base URL, the key,
// a fresh Idempotency-Key, the JSON body), reads the status and
// Retry-After of plain, chunked, empty and closing answers, keeps a
// connection only while the server does, and gives up on a server that
// does not answer within its timeout (status 0, the connection dropped).
func TestRawClientReadsWhatTheFiguresNeed(t *testing.T) {
	var (
		mu    sync.Mutex
		keys  = map[string]bool{}
		conns atomic.Int64
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/charges", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		k := r.Header.Get("Idempotency-Key")
		mu.Lock()
		dup := keys[k]
		keys[k] = true
		mu.Unlock()
		if r.Header.Get("apikey") != "qt_live_k" || r.Header.Get("Content-Type") != "application/json" ||
			string(b) != string(body) || !strings.HasPrefix(k, "bench-") || len(k) != len("bench-")+24 || dup {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"ch_1"}`))
	})
	mux.HandleFunc("GET /v1/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /v1/chunked", func(w http.ResponseWriter, r *http.Request) {
		for range 3 {
			_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
			w.(http.Flusher).Flush()
		}
	})
	release := make(chan struct{})
	mux.HandleFunc("GET /v1/slow", func(w http.ResponseWriter, r *http.Request) {
		<-release
	})
	mux.HandleFunc("GET /v1/closing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = w.Write([]byte("bye"))
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	rc, err := newRawClient(srv.URL+"/v1", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	create := func(b []byte) []byte { return rc.appendPost(b, "/charges", "qt_live_k", "bench-", body) }
	for i := range 3 {
		if status, retry := rc.do(create); status != http.StatusCreated || retry {
			t.Fatalf("create %d: status %d, retry %v", i, status, retry)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("three sequential creates opened %d connections, want 1 kept alive", n)
	}
	getPath := func(path string) func(b []byte) []byte {
		return func(b []byte) []byte { return rc.appendGet(b, path, "qt_live_k") }
	}
	if status, retry := rc.do(getPath("/busy")); status != http.StatusServiceUnavailable || !retry {
		t.Errorf("busy: status %d, retry %v; want 503 with Retry-After", status, retry)
	}
	if status, _ := rc.do(getPath("/chunked")); status != http.StatusOK {
		t.Errorf("chunked: status %d", status)
	}
	if status, _ := rc.do(getPath("/missing")); status != http.StatusNotFound {
		t.Errorf("missing: status %d", status)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("after chunked and error answers %d connections, want the one kept alive", n)
	}
	if status, _ := rc.do(getPath("/closing")); status != http.StatusOK {
		t.Errorf("closing: status %d", status)
	}
	if status, _ := rc.do(create); status != http.StatusCreated {
		t.Errorf("after a closing answer: status %d", status)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("a server that closed the connection: %d connections in all, want a second one", n)
	}

	started := time.Now()
	status, _ := rc.do(getPath("/slow"))
	close(release)
	if status != 0 || time.Since(started) > 2*time.Second {
		t.Errorf("a server that does not answer: status %d after %v, want 0 at the timeout", status, time.Since(started))
	}
	if status, _ := rc.do(create); status != http.StatusCreated {
		t.Errorf("after a timed-out request: status %d", status)
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("a timed-out connection: %d connections in all, want it dropped and a third opened", n)
	}

	srv.Close()
	if status, _ := rc.do(create); status != 0 {
		t.Errorf("server gone: status %d, want 0 (no answer)", status)
	}
}
