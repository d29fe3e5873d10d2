package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// slowStore is a charge store whose CreateCharge blocks until the test
// opens the gate: the database of an overloaded server.
type slowStore struct {
	gate    chan struct{}
	mu      sync.Mutex
	entered int
	charges map[string]bool // idempotency keys committed
}

func (s *slowStore) mock() *mocks.ChargeStoreMock {
	return &mocks.ChargeStoreMock{
		CreateChargeFunc: func(ctx context.Context, c *domain.Charge, _ []domain.Event, rec *ports.IdempotencyRecord) error {
			s.mu.Lock()
			s.entered++
			s.mu.Unlock()
			select {
			case <-s.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.charges[rec.Key] {
				return ports.ErrIdempotencyKeyExists
			}
			s.charges[rec.Key] = true
			return nil
		},
	}
}

// TestAdmissionShedsExcessFast: with every place taken by creates stuck
// on a slow store, further creates are refused within 50 ms with 503,
// Retry-After and the error envelope — never left to time out — and a
// refused create did nothing: the store never saw it, its Idempotency-Key
// is free, and a retry with the same key later creates the charge once.
func TestAdmissionShedsExcessFast(t *testing.T) {
	const places = 3
	store := &slowStore{gate: make(chan struct{}), charges: map[string]bool{}}
	records := &mocks.IdempotencyStoreMock{
		GetIdempotencyRecordFunc: func(context.Context, ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
			return nil, ports.ErrNotFound
		},
	}
	clock := &mocks.ClockMock{NowFunc: time.Now}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }}
	links := domain.Links{CheckoutBase: "https://pay.example.com/c"}
	svc := app.NewChargeService(store.mock(), exactlyonce.NewDatabaseChecked(records, idempotency.NewMemory(time.Now), clock, ids, slog.New(slog.NewTextHandler(io.Discard, nil)), exactlyonce.Config{}), sandbox.New(sandbox.Config{}, clock), nil, clock, ids, slog.New(slog.NewTextHandler(io.Discard, nil)),
		app.ChargesConfig{Links: links})

	caller := app.Caller{Account: domain.Account{ID: "acct1", MerchantName: "Loja", MerchantCity: "Sao Paulo", DefaultExpiry: time.Hour}, Mode: domain.ModeTest}
	adm := NewAdmission(AdmissionConfig{MaxInFlight: places, MaxQueue: places, QueueWait: 10 * time.Millisecond})
	r := mux.NewRouter()
	r.Use(adm.middleware, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), ctxCaller, caller)))
		})
	})
	(&ChargesController{charges: svc, links: links}).Routes(r)
	(&HealthController{}).Routes(r)
	// Server-side time of each answer (the client's clock would add the
	// connect and the scheduling of a loaded -race run).
	var (
		tookMu sync.Mutex
		took   = map[string]time.Duration{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		r.ServeHTTP(w, req)
		tookMu.Lock()
		took[req.Header.Get("Idempotency-Key")] = time.Since(start)
		tookMu.Unlock()
	}))
	defer srv.Close()

	post := func(key string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/charges", strings.NewReader(`{"amount":1990,"payment_method":"pix"}`))
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Errorf("post %s: %v", key, err)
			return nil, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}

	// Fill every place with a create stuck in the store.
	var wg sync.WaitGroup
	stuck := make([]int, places)
	for i := range places {
		wg.Go(func() {
			resp, _ := post(fmt.Sprintf("stuck-key-%d", i))
			if resp != nil {
				stuck[i] = resp.StatusCode
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		store.mu.Lock()
		n := store.entered
		store.mu.Unlock()
		if n == places {
			break
		}
		if time.Now().After(deadline) {
			resp, body := post("probe-key-0")
			t.Fatalf("only %d of %d creates reached the store (probe: %v %s)", n, places, resp.StatusCode, body)
		}
		time.Sleep(time.Millisecond)
	}

	// The excess, offered all at once: each refused quickly.
	const excess = 2 * places
	type answer struct {
		status int
		retry  string
		body   []byte
	}
	answers := make([]answer, excess)
	var ewg sync.WaitGroup
	for i := range excess {
		ewg.Go(func() {
			resp, body := post(fmt.Sprintf("excess-key-%d", i))
			if resp != nil {
				answers[i] = answer{resp.StatusCode, resp.Header.Get("Retry-After"), body}
			}
		})
	}
	ewg.Wait()
	for i, a := range answers {
		if a.status != http.StatusServiceUnavailable || a.retry == "" {
			t.Errorf("excess %d: status %d Retry-After %q, want 503 with Retry-After", i, a.status, a.retry)
		}
		// QueueWait is 10 ms; the 50 ms is checked by quitabench on
		// a quiet machine, this bound only by a loaded -race run.
		tookMu.Lock()
		d := took[fmt.Sprintf("excess-key-%d", i)]
		tookMu.Unlock()
		if d > 250*time.Millisecond {
			t.Errorf("excess %d: refused after %s, want quickly (QueueWait 10 ms)", i, d)
		}
		var env errorBody
		if err := json.Unmarshal(a.body, &env); err != nil || env.Error.Code != "service_unavailable" || env.Error.Type != typeAPI {
			t.Errorf("excess %d: body %s, want the service_unavailable envelope", i, a.body)
		}
	}
	// Probes are never queued behind the API.
	if resp, err := srv.Client().Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("healthz while saturated: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	store.mu.Lock()
	entered := store.entered
	store.mu.Unlock()
	if entered != places {
		t.Errorf("store saw %d creates, want only the %d admitted ones", entered, places)
	}
	admitted, shed := adm.Stats()
	if admitted != places || shed != excess {
		t.Errorf("stats: admitted %d shed %d, want %d and %d", admitted, shed, places, excess)
	}

	close(store.gate)
	wg.Wait()
	for i, s := range stuck {
		if s != http.StatusCreated {
			t.Errorf("stuck create %d: status %d, want 201", i, s)
		}
	}
	// Nothing was half-applied: a refused key is free, and its retry
	// creates the charge once.
	resp, body := post("excess-key-0")
	if resp == nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("retry of a refused key: %v %s, want 201", resp, body)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.charges) != places+1 || !store.charges["excess-key-0"] || store.charges["excess-key-1"] {
		t.Errorf("committed keys %v, want the %d stuck ones and excess-key-0 only", store.charges, places)
	}
}

// TestAdmissionQueueHandsPlacesOn: a request that waits gets the first
// freed place, and the limiter returns to empty.
func TestAdmissionQueueHandsPlacesOn(t *testing.T) {
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 1, MaxQueue: 1, QueueWait: time.Second})
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	if !adm.acquire(req.Context()) {
		t.Fatal("first request refused")
	}
	got := make(chan bool)
	go func() { got <- adm.acquire(req.Context()) }()
	waitForQueue(t, adm, 1)
	if adm.acquire(req.Context()) {
		t.Fatal("a request beyond MaxQueue was admitted")
	}
	adm.release()
	if !<-got {
		t.Fatal("the waiter was refused although a place was freed")
	}
	adm.release()
	adm.mu.Lock()
	defer adm.mu.Unlock()
	if adm.inFlight != 0 || len(adm.queue) != 0 {
		t.Fatalf("inFlight %d queue %d after all released, want 0 and 0", adm.inFlight, len(adm.queue))
	}
}

// TestAdmissionWaitsBrieflyWhileShedding: once a request has been
// refused, a request that finds no place free waits SheddingWait, not
// QueueWait, for ShedWindow; after the window it waits QueueWait again.
func TestAdmissionWaitsBrieflyWhileShedding(t *testing.T) {
	const window = time.Second
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 1, MaxQueue: 1, QueueWait: 5 * time.Second,
		SheddingWait: time.Millisecond, ShedWindow: window})
	ctx := context.Background()
	if !adm.acquire(ctx) {
		t.Fatal("first request refused")
	}
	// Before any refusal a waiter gets its place when one is freed 50 ms on.
	go func() { time.Sleep(50 * time.Millisecond); adm.release() }()
	if !adm.acquire(ctx) {
		t.Fatal("a waiter was refused although a place was freed within QueueWait")
	}
	// A waiter fills the queue; the next request is refused at once.
	waiter := make(chan bool)
	go func() { waiter <- adm.acquire(ctx) }()
	waitForQueue(t, adm, 1)
	if adm.acquire(ctx) {
		t.Fatal("a request beyond MaxQueue was admitted")
	}
	adm.release() // the place passes to the waiter
	if !<-waiter {
		t.Fatal("the waiter was refused although a place was freed")
	}
	// Shedding: no place frees, and the wait is the short one.
	start := time.Now()
	if adm.acquire(ctx) {
		t.Fatal("admitted with every place taken")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("refused after %v while shedding, want about SheddingWait (1 ms), not QueueWait (5 s)", took)
	}
	// After the window the full wait is back: a place freed 200 ms on is granted.
	time.Sleep(window + 50*time.Millisecond)
	go func() { time.Sleep(200 * time.Millisecond); adm.release() }()
	if !adm.acquire(ctx) {
		t.Fatal("refused after the shed window although a place was freed within QueueWait")
	}
	adm.release()
}

// TestAdmissionClientLeavingIsNotShedding: a waiter whose client went
// away is not a refusal, so the next request still waits the full
// QueueWait and gets a place freed within it.
func TestAdmissionClientLeavingIsNotShedding(t *testing.T) {
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 1, MaxQueue: 1, QueueWait: 5 * time.Second,
		SheddingWait: time.Millisecond, ShedWindow: time.Minute})
	ctx := context.Background()
	if !adm.acquire(ctx) {
		t.Fatal("first request refused")
	}
	leaving, leave := context.WithCancel(ctx)
	left := make(chan bool)
	go func() { left <- adm.acquire(leaving) }()
	waitForQueue(t, adm, 1)
	leave()
	if <-left {
		t.Fatal("a waiter whose client left was admitted")
	}
	go func() { time.Sleep(200 * time.Millisecond); adm.release() }()
	if !adm.acquire(ctx) {
		t.Fatal("refused after a client left, although a place was freed within QueueWait: the departure counted as shedding")
	}
	adm.release()
}

func waitForQueue(t *testing.T, adm *Admission, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		adm.mu.Lock()
		q := len(adm.queue)
		adm.mu.Unlock()
		if q == n {
			return
		}
	}
	t.Fatalf("the queue never held %d waiters", n)
}

// TestAdmissionCountsEventListsWithoutARealWait: only a long-poll the
// handler will honour (wait from 1 to 25 s) skips the limiter; wait=0,
// an absent wait and a wait the handler refuses are ordinary requests and
// are refused like any other when no place is free.
func TestAdmissionCountsEventListsWithoutARealWait(t *testing.T) {
	t.Parallel()
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 1, MaxQueue: 1, QueueWait: time.Millisecond})
	r := mux.NewRouter()
	r.Use(adm.middleware)
	r.HandleFunc("/v1/events", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }).Name("events.list")
	if !adm.acquire(context.Background()) { // the only place, held throughout
		t.Fatal("first place refused")
	}
	defer adm.release()
	tests := []struct {
		query string
		want  int
	}{
		{"", http.StatusServiceUnavailable},
		{"?wait=", http.StatusServiceUnavailable},
		{"?wait=0", http.StatusServiceUnavailable},
		{"?wait=0s", http.StatusServiceUnavailable},
		{"?wait=garbage", http.StatusServiceUnavailable},
		{"?wait=-5", http.StatusServiceUnavailable},
		{"?wait=26", http.StatusServiceUnavailable},
		{"?wait=1.5", http.StatusServiceUnavailable},
		{"?wait=1", http.StatusOK},
		{"?wait=25s", http.StatusOK},
		{"?limit=3&wait=10", http.StatusOK},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/events"+tt.query, nil))
		if w.Code != tt.want {
			t.Errorf("GET /v1/events%s with every place taken: %d, want %d", tt.query, w.Code, tt.want)
		}
	}
}

// TestAdmissionReadsTheBodyFirst: the limiter reads a body before it takes
// a place and hands it to the handler unchanged, whatever its framing; an
// over-size body still gets the 413 envelope from the handler, GET bodies
// are left to the handler, and a body larger than smallBody that finds
// every large-body token taken is refused like a request finding no place.
func TestAdmissionReadsTheBodyFirst(t *testing.T) {
	t.Parallel()
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 2, MaxQueue: 2, QueueWait: time.Millisecond})
	r := mux.NewRouter()
	r.Use(adm.middleware)
	var (
		mu       sync.Mutex
		buffered = map[string]bool{}
	)
	echo := func(w http.ResponseWriter, req *http.Request) {
		_, ok := req.Body.(*bufferedBody)
		mu.Lock()
		buffered[req.Method+" "+req.Header.Get("X-Case")] = ok
		mu.Unlock()
		body, err := readBody(w, req, false)
		if err != nil {
			writeError(w, req, err)
			return
		}
		_, _ = w.Write(body)
	}
	r.HandleFunc("/echo", echo).Methods(http.MethodGet, http.MethodPost, http.MethodDelete).Name("echo")
	srv := httptest.NewServer(r)
	defer srv.Close()

	send := func(method, name string, body io.Reader, size int64) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/echo", body)
		req.Header.Set("X-Case", name)
		if size >= 0 {
			req.ContentLength = size
		} else {
			req.ContentLength = -1 // chunked
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, name, err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp, got
	}
	small := `{"amount":1990,"paymentMethods":["PIX"],"idempotencyKey":"k-1"}`
	exact := strings.Repeat("a", maxBody)
	large := strings.Repeat("b", smallBody+1)
	tests := []struct {
		name, method string
		body         string
		chunked      bool
		wantStatus   int
		wantBuffered bool
	}{
		{"small", http.MethodPost, small, false, http.StatusOK, true},
		{"small chunked", http.MethodPost, small, true, http.StatusOK, true},
		{"empty", http.MethodPost, "", false, http.StatusOK, false},
		{"delete", http.MethodDelete, small, false, http.StatusOK, true},
		{"large", http.MethodPost, large, false, http.StatusOK, true},
		{"exactly maxBody", http.MethodPost, exact, true, http.StatusOK, true},
		{"get", http.MethodGet, small, false, http.StatusOK, false},
	}
	for _, tt := range tests {
		size := int64(len(tt.body))
		if tt.chunked {
			size = -1
		}
		resp, got := send(tt.method, tt.name, strings.NewReader(tt.body), size)
		if resp.StatusCode != tt.wantStatus || string(got) != tt.body {
			t.Errorf("%s: %d with %d bytes, want %d echoing the %d sent", tt.name, resp.StatusCode, len(got), tt.wantStatus, len(tt.body))
		}
		mu.Lock()
		if b := buffered[tt.method+" "+tt.name]; b != tt.wantBuffered {
			t.Errorf("%s: body read ahead %v, want %v", tt.name, b, tt.wantBuffered)
		}
		mu.Unlock()
	}

	// Over maxBody, with and without a Content-Length: the 413 envelope.
	for _, chunked := range []bool{false, true} {
		size := int64(maxBody + 1)
		if chunked {
			size = -1
		}
		resp, got := send(http.MethodPost, "over", strings.NewReader(strings.Repeat("c", maxBody+1)), size)
		var env errorBody
		if resp.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(got, &env) != nil ||
			env.Error.Code != "request_too_large" || env.Error.Type != typeInvalidRequest {
			t.Errorf("over maxBody (chunked %v): %d %s, want 413 request_too_large", chunked, resp.StatusCode, got)
		}
	}

	// Every large-body token taken: a large body is refused at once, a
	// small one is not concerned.
	for range cap(adm.largeBodies) {
		adm.largeBodies <- struct{}{}
	}
	resp, got := send(http.MethodPost, "large, no token", strings.NewReader(large), int64(len(large)))
	var env errorBody
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		json.Unmarshal(got, &env) != nil || env.Error.Code != "service_unavailable" {
		t.Errorf("large body with every token taken: %d %s, want 503 service_unavailable with Retry-After", resp.StatusCode, got)
	}
	if resp, got := send(http.MethodPost, "small, no token", strings.NewReader(small), int64(len(small))); resp.StatusCode != http.StatusOK || string(got) != small {
		t.Errorf("small body with every large-body token taken: %d %s, want 200", resp.StatusCode, got)
	}
	for range cap(adm.largeBodies) {
		<-adm.largeBodies
	}
	adm.mu.Lock()
	defer adm.mu.Unlock()
	if adm.inFlight != 0 {
		t.Errorf("inFlight %d after every request ended, want 0", adm.inFlight)
	}
}

// TestAdmissionBodyReadErrorReachesTheHandler: a body that fails while it
// is read ahead (the client went away) is handed on with its error, which
// the handler sees where it would have.
func TestAdmissionBodyReadErrorReachesTheHandler(t *testing.T) {
	t.Parallel()
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 1})
	r := mux.NewRouter()
	r.Use(adm.middleware)
	var got error
	r.HandleFunc("/echo", func(w http.ResponseWriter, req *http.Request) {
		_, got = readBody(w, req, false)
	}).Methods(http.MethodPost).Name("echo")
	broken := errors.New("connection reset")
	req := httptest.NewRequest(http.MethodPost, "/echo", io.MultiReader(strings.NewReader(`{"a":`), errReader{broken}))
	r.ServeHTTP(httptest.NewRecorder(), req)
	if !errors.Is(got, broken) {
		t.Fatalf("handler read %v, want the body's error", got)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestRequestLeavesAndRetakesItsPlace: a request that gives its place back
// (app.AdmissionPlace, around a webhook URL's DNS lookup) frees it for
// another, takes one again as a new request would — refused with the 503
// envelope when none is free — and the limiter ends empty either way.
func TestRequestLeavesAndRetakesItsPlace(t *testing.T) {
	t.Parallel()
	adm := NewAdmission(AdmissionConfig{MaxInFlight: 1, MaxQueue: 1, QueueWait: time.Millisecond})
	r := mux.NewRouter()
	r.Use(requestLog(slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil), adm.middleware)
	r.HandleFunc("/work", func(w http.ResponseWriter, req *http.Request) {
		st := stateOf(req.Context())
		if adm.acquire(req.Context()) {
			t.Error("a second request was admitted while the only place was held")
			adm.release()
		}
		if !st.Leave() || st.Leave() {
			t.Error("Leave: want true once, then false")
		}
		// The place is free for another request meanwhile.
		if !adm.acquire(req.Context()) {
			t.Fatal("the place the request left was not free")
		}
		err := st.Reenter(req.Context())
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Code != "service_unavailable" {
			t.Errorf("Reenter with no free place: %v, want the 503 service_unavailable", err)
		}
		adm.release()
		if err := st.Reenter(req.Context()); err != nil {
			t.Errorf("Reenter with a free place: %v", err)
		}
		if req.URL.Query().Get("leave") == "end" && !st.Leave() {
			t.Error("Leave after Reenter: want true")
		}
		w.WriteHeader(http.StatusNoContent)
	}).Name("work")
	for _, q := range []string{"", "?leave=end"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/work"+q, nil))
		if w.Code != http.StatusNoContent {
			t.Fatalf("status %d, want 204", w.Code)
		}
		adm.mu.Lock()
		if adm.inFlight != 0 || len(adm.queue) != 0 {
			t.Errorf("%q: inFlight %d queue %d after the request, want 0 and 0", q, adm.inFlight, len(adm.queue))
		}
		adm.mu.Unlock()
	}
	if admitted, shed := adm.Stats(); admitted != 2 || shed != 2 {
		t.Errorf("stats admitted %d shed %d, want 2 and 2 (the refused re-entries)", admitted, shed)
	}
}
