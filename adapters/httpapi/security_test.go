package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
	"github.com/quitapix/quita/quitatest"
)

// security.md, item 3: invented methods share one label, and neither a
// huge method nor a huge path grows /metrics or the access log.
func TestMetricsAndLogsBoundTheMethod(t *testing.T) {
	t.Parallel()
	logs := &testkit.Buffer{}
	srv := quitatest.NewServer(t, quitatest.Options{Log: logs})
	send := func(method, path string) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i := range 200 {
		send(fmt.Sprintf("XMETHOD%d", i), "/v1/charges")
	}
	huge := "Z" + strings.Repeat("M", 100_000)
	send(huge, "/healthz")
	send(huge, "/no/such/"+strings.Repeat("p", 50_000))

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if strings.Contains(body, "XMETHOD") || strings.Contains(body, "MMMMMMMM") {
		t.Fatal("/metrics holds a client-chosen method")
	}
	if !strings.Contains(body, `quita_http_requests_total{code="405",method="OTHER",route="/v1/charges"} 200`) {
		t.Errorf("invented methods are not counted as OTHER:\n%s", grepLines(body, "quita_http_requests_total"))
	}
	if len(body) > 200_000 {
		t.Errorf("/metrics is %d bytes", len(body))
	}
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); len(line) > 4096 || strings.Contains(line, "XMETHOD") {
			t.Fatalf("log line of %d bytes: %.200s", len(line), line)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// loginBurst sends bodies to /auth/login at once and counts the statuses.
func loginBurst(t *testing.T, base string, bodies []string) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for _, b := range bodies {
		wg.Go(func() {
			r := call(t, http.MethodPost, base+"/auth/login", nil, b)
			mu.Lock()
			got[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

// security.md, item 4: parallel wrong passwords are counted before they are
// hashed, so a burst cannot outrun the throttle.
func TestLoginBurstIsThrottled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	m := e.account(srv, "Loja Rajada")
	wrong := `{"email":"` + m.Email + `","password":"not the password"}`
	got := loginBurst(t, srv.BaseURL, slicesRepeat(wrong, 40))
	if got[401] > 5 || got[429] < 35 || got[401]+got[429] != 40 {
		t.Fatalf("40 parallel wrong passwords: %v, want at most 5 × 401 and the rest 429", got)
	}
}

// security.md, item 4: 29 wrong passwords still hashing, then the right one
// in the same burst: it must not log in.
func TestLoginRightPasswordInsideABurstIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	m := e.account(srv, "Loja Rajada Certa")
	wrong := `{"email":"` + m.Email + `","password":"not the password"}`
	done := make(chan int, 29)
	for range 29 {
		go func() { done <- call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, wrong).Status }()
	}
	// The right password goes in once the burst has been counted: after
	// the first refusal (the sixth attempt's 429), or, if none comes, after
	// every wrong attempt has been answered (a throttle that counted after
	// hashing would answer all 29 with 401, and the right one would then
	// log in). Waiting
	// for a fixed time instead let a loaded machine send the right
	// password among the first five attempts the server saw.
	statuses := map[int]int{}
	for statuses[http.StatusTooManyRequests] == 0 && sum(statuses) < 29 {
		statuses[<-done]++
	}
	right := call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, `{"email":"`+m.Email+`","password":"`+password+`"}`)
	for sum(statuses) < 29 {
		statuses[<-done]++
	}
	if right.Status == http.StatusOK {
		e.secretsIn(right.Body)
		t.Fatalf("the right password logged in inside a burst of 29 wrong ones (%v)", statuses)
	}
	expectError(t, right, 429, "rate_limit_error", "rate_limited")
	if statuses[401] > 5 {
		t.Errorf("%d wrong passwords verified, want at most 5", statuses[401])
	}
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// security.md, item 16: one address's failed API keys are limited; keys this
// process already authenticated keep working from it; the window ends.
func TestAPIKeyFailuresAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)) // still: the limits must not refill under a slow run
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock, JWTSecret: jwtSecret})
	e := &env{t: t}
	m := e.account(srv, "Loja Chaves")
	if !authenticated(t, srv.BaseURL, m.TestKey) {
		t.Fatal("the test key was refused")
	}
	bad := "qt_test_" + strings.Repeat("x", 32)
	for range 60 {
		expectError(t, call(t, http.MethodGet, srv.BaseURL+"/charges", keyHdr(bad), ""), 401, "authentication_error", "api_key_invalid")
	}
	r := call(t, http.MethodGet, srv.BaseURL+"/charges", keyHdr(bad), "")
	expectError(t, r, 429, "rate_limit_error", "rate_limited")
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if r := call(t, http.MethodGet, srv.BaseURL+"/charges", keyHdr(m.TestKey), ""); r.Status != http.StatusOK {
		t.Errorf("a known key from a throttled address: %d %s", r.Status, r.Body)
	}
	clock.Advance(time.Minute)
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/charges", keyHdr(bad), ""), 401, "authentication_error", "api_key_invalid")
}

// An account's keys of one mode share an account-wide budget (4 × the
// per-key limit), so minting keys does not multiply it; the other mode has
// its own, so test traffic never starves live traffic.
func TestRateLimitPerAccountAcrossKeys(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)) // still: the limits must not refill under a slow run
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock, JWTSecret: jwtSecret})
	e := &env{t: t}
	m := e.account(srv, "Loja Muitas Chaves")
	setLimits(t, srv, m.AccountID, ports.AccountSettings{RateLimitPerSecond: 1, RateLimitBurst: 2})
	token := e.login(srv, m)
	keys := []string{m.TestKey}
	for range 4 {
		keys = append(keys, decodeIssued(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(token), `{"test":true}`)).APIKey)
	}
	for i, k := range keys[:4] {
		for j, r := range burst(t, srv, k, 2) {
			if r.Status != 404 {
				t.Fatalf("key %d request %d within both budgets: %d %s", i, j, r.Status, r.Body)
			}
		}
	}
	r := burst(t, srv, keys[4], 1)[0]
	expectError(t, r, 429, "rate_limit_error", "rate_limited")
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	// The test keys spent the test budget; the live key has its own.
	for j, r := range burst(t, srv, m.LiveKey, 2) {
		if r.Status != 404 {
			t.Fatalf("live request %d after the test budget was spent: %d %s", j, r.Status, r.Body)
		}
	}
}

// countingLimiter records the limiter keys it was asked about.
type countingLimiter struct {
	next    ports.RateLimiter
	mu      sync.Mutex
	account int
}

func (c *countingLimiter) Allow(ctx context.Context, key string, l ports.RateLimit) (ports.RateDecision, error) {
	if strings.HasPrefix(key, "acct:") {
		c.mu.Lock()
		c.account++
		c.mu.Unlock()
	}
	return c.next.Allow(ctx, key, l)
}

// The account-wide limit cannot refuse while the account has at most 4
// keys (4 × the per-key budget covers them all), so its limiter call is
// skipped then; from a fifth key on it is asked on every request.
func TestAccountLimitAskedOnlyWhenItCanBind(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock, JWTSecret: jwtSecret})
	e := &env{t: t}
	m := e.account(srv, "Loja Poucas Chaves")
	setLimits(t, srv, m.AccountID, ports.AccountSettings{RateLimitPerSecond: 1000, RateLimitBurst: 1000})
	d := srv.App.Dashboard
	lim := &countingLimiter{next: d.Limiter}
	mw := httpapi.APIKeyAuth(httpapi.Deps{Accounts: srv.App.Accounts, RateLimits: d.GuardSettings, Limiter: lim})(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	serve := func(key string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/v1/charges", nil)
		req.Header.Set("apikey", key)
		rec := httptest.NewRecorder()
		mw.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			t.Fatalf("request: %d %s", rec.Code, rec.Body)
		}
	}
	token := e.login(srv, m)
	keys := []string{m.TestKey, m.LiveKey}
	for range 2 {
		keys = append(keys, decodeIssued(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(token), `{"test":true}`)).APIKey)
	}
	setLimits(t, srv, m.AccountID, ports.AccountSettings{RateLimitPerSecond: 1000, RateLimitBurst: 1000}) // drops the cached count
	for _, k := range keys {
		serve(k)
	}
	if lim.account != 0 {
		t.Errorf("with 4 keys the account's limiter was asked %d times, want 0", lim.account)
	}
	keys = append(keys, decodeIssued(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(token), `{"test":true}`)).APIKey)
	setLimits(t, srv, m.AccountID, ports.AccountSettings{RateLimitPerSecond: 1000, RateLimitBurst: 1000})
	for _, k := range keys {
		serve(k)
	}
	if lim.account != len(keys) {
		t.Errorf("with 5 keys the account's limiter was asked %d times for %d requests", lim.account, len(keys))
	}
}
