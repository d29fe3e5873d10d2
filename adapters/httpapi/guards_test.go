package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
	"github.com/quitapix/quita/quitatest"
)

func setLimits(t *testing.T, srv *quitatest.Server, accountID string, s ports.AccountSettings) {
	t.Helper()
	if err := srv.App.Dashboard.GuardSettings.Set(context.Background(), accountID, s); err != nil {
		t.Fatal(err)
	}
}

func checkLimitHeaders(t *testing.T, r resp, limit, remaining int) {
	t.Helper()
	if got := r.Header.Get("RateLimit-Limit"); got != strconv.Itoa(limit) {
		t.Errorf("RateLimit-Limit %q, want %d", got, limit)
	}
	if got := r.Header.Get("RateLimit-Remaining"); got != strconv.Itoa(remaining) {
		t.Errorf("RateLimit-Remaining %q, want %d", got, remaining)
	}
	if reset, err := strconv.Atoi(r.Header.Get("RateLimit-Reset")); err != nil || reset < 0 || reset > 10 {
		t.Errorf("RateLimit-Reset %q", r.Header.Get("RateLimit-Reset"))
	}
}

func burst(t *testing.T, srv *quitatest.Server, key string, n int) []resp {
	out := make([]resp, n)
	for i := range out {
		out[i] = call(t, http.MethodGet, srv.BaseURL+"/charges/ch_missing000000000000000", keyHdr(key), "")
	}
	return out
}

func checkBurst(t *testing.T, rs []resp, limit int) {
	t.Helper()
	for i, r := range rs[:limit] {
		if r.Status != 404 {
			t.Fatalf("request %d within the burst: %d %s", i, r.Status, r.Body)
		}
		checkLimitHeaders(t, r, limit, limit-1-i)
	}
	for _, r := range rs[limit:] {
		expectError(t, r, 429, "rate_limit_error", "rate_limited")
		checkLimitHeaders(t, r, limit, 0)
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
	}
}

// With Redis the limit is shared by every process.
func TestRateLimitRedis(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, other := e.server(nil), e.server(nil)
	a := e.account(srv, "Loja Limite")
	b := e.account(srv, "Loja Livre")
	// 2 per second: one more request every 500 ms after a burst of 3 (slow
	// enough that a loaded -race run makes the burst well within it).
	setLimits(t, srv, a.AccountID, ports.AccountSettings{RateLimitPerSecond: 2, RateLimitBurst: 3})
	setLimits(t, other, a.AccountID, ports.AccountSettings{RateLimitPerSecond: 2, RateLimitBurst: 3})

	rs := burst(t, srv, a.TestKey, 3)
	rs = append(rs, burst(t, other, a.TestKey, 2)...)
	checkBurst(t, rs, 3)
	// Another key of the same account has its own budget; another account
	// keeps the defaults.
	if r := burst(t, srv, a.LiveKey, 1)[0]; r.Status != 404 {
		t.Fatalf("other key limited: %d", r.Status)
	}
	if r := burst(t, srv, b.TestKey, 1)[0]; r.Status != 404 || r.Header.Get("RateLimit-Limit") != "200" {
		t.Fatalf("default limit: %d %q", r.Status, r.Header.Get("RateLimit-Limit"))
	}
	// Redis's clock cannot be moved: wait one emission interval, less than
	// the whole-second Retry-After.
	time.Sleep(550 * time.Millisecond)
	if r := burst(t, other, a.TestKey, 1)[0]; r.Status != 404 {
		t.Fatalf("after the interval: %d %s", r.Status, r.Body)
	}
}

// Without Redis (and when Redis is down) the in-process GCRA limits on the
// server's clock: after Retry-After seconds the key passes again.
func TestRateLimitInProcess(t *testing.T) {
	t.Parallel()
	for name, redisURL := range map[string]string{"no redis": "", "redis down": "redis://127.0.0.1:1/0"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := quitatest.NewClock()
			logs := &testkit.Buffer{}
			srv := quitatest.NewServer(t, quitatest.Options{Clock: clock, RedisURL: redisURL, Log: logs})
			e := &env{t: t}
			a := e.account(srv, "Loja Local")
			setLimits(t, srv, a.AccountID, ports.AccountSettings{RateLimitPerSecond: 1, RateLimitBurst: 2})
			rs := burst(t, srv, a.TestKey, 4)
			checkBurst(t, rs, 2)
			wait, _ := strconv.Atoi(rs[3].Header.Get("Retry-After"))
			clock.Advance(time.Duration(wait) * time.Second)
			if r := burst(t, srv, a.TestKey, 1)[0]; r.Status != 404 {
				t.Fatalf("after Retry-After: %d %s", r.Status, r.Body)
			}
			if strings.Contains(logs.String(), a.TestKey) {
				t.Error("logs hold the key")
			}
		})
	}
}

func createCharge(t *testing.T, srv *quitatest.Server, key, idem string, amount int64, doc string) resp {
	t.Helper()
	body := `{"amount":` + strconv.FormatInt(amount, 10) + `,"payment_method":"pix"`
	if doc != "" {
		body += `,"customer":{"name":"Ana","document":"` + doc + `"}`
	}
	return call(t, http.MethodPost, srv.BaseURL+"/charges", map[string]string{"apikey": key, "Idempotency-Key": idem}, body+"}")
}

func countCharges(t *testing.T, srv *quitatest.Server, key string) int {
	t.Helper()
	r := call(t, http.MethodGet, srv.BaseURL+"/charges?limit=100", keyHdr(key), "")
	var l struct{ Data []any }
	if err := json.Unmarshal(r.Body, &l); err != nil || r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	return len(l.Data)
}

func TestFraudGuard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := quitatest.NewClock()
	srv := e.server(clock)
	a := e.account(srv, "Loja Guarda")
	b := e.account(srv, "Loja Sem Regras")
	tok := e.login(srv, a)
	setLimits(t, srv, a.AccountID, ports.AccountSettings{VelocityPerHour: 2, AmountLimit: 50_000})

	// Amount cap (A's own; B has the default R$ 100,000.00).
	expectError(t, createCharge(t, srv, a.TestKey, "fraud-amount-1", 50_001, ""), 403, "fraud_error", "fraud.amount_limit_exceeded")
	if r := createCharge(t, srv, a.TestKey, "fraud-amount-2", 50_000, ""); r.Status != 201 {
		t.Fatalf("at the cap: %d %s", r.Status, r.Body)
	}
	expectError(t, createCharge(t, srv, b.TestKey, "fraud-amount-3", 10_000_001, ""), 403, "fraud_error", "fraud.amount_limit_exceeded")
	if r := createCharge(t, srv, b.TestKey, "fraud-amount-4", 10_000_000, ""); r.Status != 201 {
		t.Fatalf("default cap: %d %s", r.Status, r.Body)
	}

	// Velocity per payer document, any spelling of it.
	for i, doc := range []string{payerCPF, payerNorm} {
		if r := createCharge(t, srv, a.TestKey, "fraud-vel-"+strconv.Itoa(i), 100, doc); r.Status != 201 {
			t.Fatalf("charge %d: %d %s", i, r.Status, r.Body)
		}
	}
	before := countCharges(t, srv, a.TestKey)
	r := createCharge(t, srv, a.TestKey, "fraud-vel-2", 100, payerCPF)
	expectError(t, r, 403, "fraud_error", "fraud.velocity_exceeded")
	if strings.Contains(string(r.Body), payerNorm) || strings.Contains(string(r.Body), payerCPF) {
		t.Error("the refusal echoes the document")
	}
	if after := countCharges(t, srv, a.TestKey); after != before {
		t.Fatalf("a refused charge was written: %d → %d", before, after)
	}
	// Another payer, the live mode and another account are not affected.
	if r := createCharge(t, srv, a.TestKey, "fraud-vel-3", 100, "111.444.777-35"); r.Status != 201 {
		t.Fatalf("other payer: %d %s", r.Status, r.Body)
	}
	if r := createCharge(t, srv, b.TestKey, "fraud-vel-4", 100, payerCPF); r.Status != 201 {
		t.Fatalf("other account: %d %s", r.Status, r.Body)
	}
	// An hour later the payer may pay again; the same Idempotency-Key
	// that was refused now creates the charge.
	clock.Advance(time.Hour + time.Second)
	if r := createCharge(t, srv, a.TestKey, "fraud-vel-2", 100, payerCPF); r.Status != 201 {
		t.Fatalf("after an hour: %d %s", r.Status, r.Body)
	}

	// Block list.
	if err := srv.App.Dashboard.FraudGuard.BlockPayer(context.Background(), a.AccountID, payerCPF); err != nil {
		t.Fatal(err)
	}
	expectError(t, createCharge(t, srv, a.TestKey, "fraud-block-1", 100, payerNorm), 403, "fraud_error", "fraud.payer_blocked")
	if r := createCharge(t, srv, b.TestKey, "fraud-block-2", 100, payerNorm); r.Status != 201 {
		t.Fatalf("blocked in A only: %d %s", r.Status, r.Body)
	}
	if err := srv.App.Dashboard.FraudGuard.UnblockPayer(context.Background(), a.AccountID, payerNorm); err != nil {
		t.Fatal(err)
	}
	if r := createCharge(t, srv, a.TestKey, "fraud-block-3", 100, payerNorm); r.Status != 201 {
		t.Fatalf("after unblocking: %d %s", r.Status, r.Body)
	}

	// Each refusal is audited with the key's fingerprint and the code.
	r = call(t, http.MethodGet, srv.BaseURL+"/audit-logs", bearerHdr(tok), "")
	var audit struct {
		Data []struct{ Action, Code, KeyFingerprint string }
	}
	_ = json.Unmarshal(r.Body, &audit)
	var codes []string
	for _, a0 := range audit.Data {
		if a0.Action == app.AuditChargeRefused {
			codes = append(codes, a0.Code)
			if a0.KeyFingerprint != domain.APIKeyFingerprint(a.TestKey) {
				t.Errorf("refusal audited with fingerprint %q", a0.KeyFingerprint)
			}
		}
	}
	slices.Sort(codes)
	if want := []string{"fraud.amount_limit_exceeded", "fraud.payer_blocked", "fraud.velocity_exceeded"}; !slices.Equal(codes, want) {
		t.Errorf("audited refusals %v, want %v", codes, want)
	}
}
