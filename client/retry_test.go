package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// script is a fake server that answers attempt i with steps[i] and records
// what each attempt carried.
type script struct {
	mu    sync.Mutex
	steps []func(w http.ResponseWriter)
	seen  []*http.Request
	body  []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	i := len(s.seen)
	s.seen = append(s.seen, r)
	s.body = append(s.body, string(b))
	s.mu.Unlock()
	if i >= len(s.steps) {
		i = len(s.steps) - 1
	}
	s.steps[i](w)
}

func (s *script) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

func answer(status int, retryAfter, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("X-Request-Id", "req_hdr")
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func apiError(status int, typ, code, retryAfter string) func(http.ResponseWriter) {
	return answer(status, retryAfter, `{"error":{"type":"`+typ+`","code":"`+code+`","message":"m","param":"p"},"request_id":"req_`+code+`"}`)
}

// dropConnection closes the connection without an answer: a network error
// after the request was sent.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

const chargeJSON = `{"id":"ch_1","object":"charge","amount":1990,"currency":"BRL","status":"pending","payment_method":"pix","customer":{},"checkout_url":"u","settlement":{},"metadata":{},"created_at":"2026-11-24T12:00:00.000Z"}`

// testClient returns a client of srv whose waits are recorded, not slept.
func testClient(t *testing.T, h http.Handler, opts ...Option) (*Client, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := New(srv.URL+"/v1", "qt_test_x", opts...)
	var (
		mu    sync.Mutex
		waits []time.Duration
	)
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return ctx.Err()
	}
	return c, &waits
}

// A create survives a 503, a dropped connection and a 500: every attempt
// carries the same generated Idempotency-Key, so the server runs it once.
func TestRetriesKeepTheGeneratedIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){
		apiError(503, "provider_error", "acquirer_unavailable", ""),
		dropConnection,
		apiError(500, "api_error", "internal_error", ""),
		answer(201, "", chargeJSON),
	}}
	c, waits := testClient(t, s)
	ch, resp, err := c.Charges.CreateWithResponse(context.Background(), ChargeParams{Amount: 1990})
	if err != nil {
		t.Fatal(err)
	}
	// net/http itself resends a request with an Idempotency-Key once when
	// a kept-alive connection drops, so the server may see one more.
	if ch.ID != "ch_1" || resp.Attempts < 3 || s.attempts() != 4 || len(*waits) != resp.Attempts-1 {
		t.Fatalf("charge %s, %d attempts (server saw %d), %d waits", ch.ID, resp.Attempts, s.attempts(), len(*waits))
	}
	key := s.seen[0].Header.Get("Idempotency-Key")
	if !strings.HasPrefix(key, "idem_") || len(key) < 8 || len(key) > 128 {
		t.Fatalf("generated key %q", key)
	}
	for i, r := range s.seen {
		if r.Header.Get("Idempotency-Key") != key || s.body[i] != s.body[0] || r.Header.Get("apikey") != "qt_test_x" {
			t.Fatalf("attempt %d: key %q body %s", i, r.Header.Get("Idempotency-Key"), s.body[i])
		}
	}
	for _, w := range *waits {
		if w <= 0 || w > 8*time.Second {
			t.Fatalf("backoff %v outside (0, 8s]", w)
		}
	}
}

// The payments surface carries its key in the body: retries resend it
// unchanged, and a caller's own key is used as given.
func TestRetriesKeepTheBodyIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){
		apiError(409, "idempotency_error", "idempotency_key_in_use", "1"),
		answer(201, "", `{"id":"tx_1","status":"WAITING_PAYMENT","amount":5000,"currency":"BRL","paymentMethods":["PIX"],"metadata":{},"createdAt":"2026-11-24T12:00:00.000Z"}`),
	}}
	c, waits := testClient(t, s)
	p, err := c.Payments.Create(context.Background(), PaymentParams{Amount: 5000, PaymentMethods: []string{MethodPix}, IdempotencyKey: "order-1002-attempt"})
	if err != nil || p.ID != "tx_1" {
		t.Fatalf("%+v %v", p, err)
	}
	if len(*waits) != 1 || (*waits)[0] != time.Second {
		t.Fatalf("waits %v, want the server's Retry-After of 1 s", *waits)
	}
	for i := range s.body {
		var b struct {
			Key string `json:"idempotencyKey"`
		}
		if err := json.Unmarshal([]byte(s.body[i]), &b); err != nil || b.Key != "order-1002-attempt" {
			t.Fatalf("attempt %d body %s", i, s.body[i])
		}
	}
}

// A write that is not a money write, given a key, is retried as one: after
// a 500, a dropped connection and 409 idempotency_key_in_use, every attempt
// carries the caller's key and the same body. Without a key it is not
// resent (TestNoRetryForFinalAnswers).
func TestKeyedWritesAreRetriedWithTheirKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key, answer string
		call              func(*Client, string) (string, error)
	}{
		{"endpoint", "register-erp-hooks", `{"id":"we_1","url":"https://x","events":["charge.paid"],"status":"ACTIVE","secret":"s3cr3t","createdAt":"2026-11-24T12:00:00.000Z","updatedAt":"2026-11-24T12:00:00.000Z"}`,
			func(c *Client, key string) (string, error) {
				ep, err := c.Webhooks.CreateEndpoint(context.Background(), EndpointParams{URL: "https://x", Events: []string{EventChargePaid}, IdempotencyKey: key})
				if err != nil {
					return "", err
				}
				return ep.Secret, nil
			}},
		{"api key", "issue-erp-key-0001", `{"id":"key_1","apiKey":"s3cr3t","fingerprint":"f","prefix":"qt_test_abcd","label":"erp","createdAt":"2026-11-24T12:00:00.000Z"}`,
			func(c *Client, key string) (string, error) {
				k, err := c.APIKeys.Issue(context.Background(), KeyParams{Label: "erp", IdempotencyKey: key})
				if err != nil {
					return "", err
				}
				return k.APIKey, nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &script{steps: []func(http.ResponseWriter){
				apiError(500, "api_error", "internal_error", ""),
				dropConnection,
				apiError(409, "idempotency_error", "idempotency_key_in_use", "1"),
				answer(201, "", tc.answer),
			}}
			c, _ := testClient(t, s, WithToken("tok"))
			secret, err := tc.call(c, tc.key)
			if err != nil || secret != "s3cr3t" {
				t.Fatalf("%q %v after %d attempts", secret, err, s.attempts())
			}
			for i, r := range s.seen {
				if r.Header.Get("Idempotency-Key") != tc.key || s.body[i] != s.body[0] || strings.Contains(s.body[i], tc.key) {
					t.Fatalf("attempt %d: key %q body %s", i, r.Header.Get("Idempotency-Key"), s.body[i])
				}
			}
		})
	}
}

// 429 waits for Retry-After (seconds or an HTTP date), on any request.
func TestRateLimitHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){
		apiError(429, "rate_limit_error", "rate_limited", "3"),
		apiError(429, "rate_limit_error", "rate_limited", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat)),
		answer(201, "", `{"id":"we_1","url":"https://x","events":["charge.paid"],"status":"ACTIVE","secret":"s"}`),
	}}
	c, waits := testClient(t, s)
	ep, err := c.Webhooks.CreateEndpoint(context.Background(), EndpointParams{URL: "https://x", Events: []string{EventChargePaid}})
	if err != nil || ep.ID != "we_1" {
		t.Fatalf("%+v %v", ep, err)
	}
	if len(*waits) != 2 || (*waits)[0] != 3*time.Second || (*waits)[1] <= 0 || (*waits)[1] > 2*time.Second {
		t.Fatalf("waits %v", *waits)
	}
}

// What a retry cannot fix is returned at once, as a typed error.
func TestNoRetryForFinalAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		step func(http.ResponseWriter)
		call func(*Client) error
		is   error
	}{
		{"validation", apiError(400, "invalid_request_error", "parameter_invalid", ""), func(c *Client) error {
			_, err := c.Charges.Create(context.Background(), ChargeParams{Amount: -1})
			return err
		}, ErrInvalidRequest},
		{"key reused", apiError(409, "idempotency_error", "idempotency_key_reused", ""), func(c *Client) error {
			_, err := c.Charges.Create(context.Background(), ChargeParams{Amount: 1, IdempotencyKey: "k-00000001"})
			return err
		}, ErrIdempotencyKeyReused},
		{"not found", apiError(404, "invalid_request_error", "resource_not_found", ""), func(c *Client) error {
			_, err := c.Charges.Get(context.Background(), "ch_nope")
			return err
		}, ErrNotFound},
		{"fraud", apiError(403, "fraud_error", "fraud.velocity", ""), func(c *Client) error {
			_, err := c.Charges.Create(context.Background(), ChargeParams{Amount: 1})
			return err
		}, ErrFraud},
		{"dropped non-idempotent write", dropConnection, func(c *Client) error {
			_, err := c.Webhooks.CreateEndpoint(context.Background(), EndpointParams{URL: "https://x"})
			return err
		}, nil},
		{"500 on a write without a key", apiError(500, "api_error", "internal_error", ""), func(c *Client) error {
			_, err := c.Payments.Cancel(context.Background(), "tx_1")
			return err
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &script{steps: []func(http.ResponseWriter){tc.step, answer(200, "", "{}")}}
			c, _ := testClient(t, s)
			err := tc.call(c)
			if err == nil || s.attempts() != 1 {
				t.Fatalf("err %v after %d attempts, want an error after 1", err, s.attempts())
			}
			if tc.is == nil {
				return
			}
			var e *Error
			if !errors.Is(err, tc.is) || !errors.As(err, &e) {
				t.Fatalf("%v is not %v", err, tc.is)
			}
			if e.Type == "" || e.Code == "" || e.Param != "p" || e.RequestID != "req_"+e.Code || e.HTTPStatus < 400 {
				t.Fatalf("error fields %+v", e)
			}
		})
	}
}

// The budget bounds the attempts; the last error is returned typed.
func TestRetryBudget(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){apiError(500, "api_error", "internal_error", "")}}
	c, waits := testClient(t, s, WithMaxRetries(5))
	_, err := c.Charges.Get(context.Background(), "ch_1")
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != 500 || s.attempts() != 6 || len(*waits) != 5 {
		t.Fatalf("err %v, %d attempts, %d waits", err, s.attempts(), len(*waits))
	}

	s2 := &script{steps: []func(http.ResponseWriter){apiError(500, "api_error", "internal_error", "")}}
	c2, _ := testClient(t, s2, WithMaxRetries(0))
	if _, err := c2.Charges.Get(context.Background(), "ch_1"); err == nil || s2.attempts() != 1 {
		t.Fatalf("no retries: err %v, %d attempts", err, s2.attempts())
	}

	// A Retry-After beyond MaxRetryAfter is not waited for.
	s3 := &script{steps: []func(http.ResponseWriter){apiError(429, "rate_limit_error", "rate_limited", "120")}}
	c3, w3 := testClient(t, s3)
	if _, err := c3.Charges.Get(context.Background(), "ch_1"); !errors.Is(err, ErrRateLimited) || s3.attempts() != 1 || len(*w3) != 0 {
		t.Fatalf("long Retry-After: err %v, %d attempts", err, s3.attempts())
	}
}

// A cancelled context ends the retries.
func TestRetryStopsWithTheContext(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){apiError(503, "api_error", "service_unavailable", "1")}}
	c, _ := testClient(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	c.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	_, err := c.Charges.Get(ctx, "ch_1")
	if !errors.Is(err, context.Canceled) || s.attempts() != 1 {
		t.Fatalf("err %v after %d attempts", err, s.attempts())
	}
}

// A body that is not the envelope (a proxy's page) still gives an *Error.
func TestErrorFromANonEnvelopeBody(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){answer(502, "", "<html>bad gateway</html>")}}
	c, _ := testClient(t, s, WithMaxRetries(0))
	_, err := c.Charges.Get(context.Background(), "ch_1")
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != 502 || e.RequestID != "req_hdr" || e.Code != "http_502" {
		t.Fatalf("%#v", err)
	}
}

// A request the transport refuses to send is not retried: no attempt can
// succeed.
func TestNoRetryForAnUnsendableRequest(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){answer(200, "", chargeJSON)}}
	c, waits := testClient(t, s)
	_, err := c.Charges.Create(context.Background(), ChargeParams{Amount: 1, IdempotencyKey: "bad\nkey-0001"})
	if err == nil || s.attempts() != 0 || len(*waits) != 0 {
		t.Fatalf("err %v, %d attempts, %d waits", err, s.attempts(), len(*waits))
	}
}
