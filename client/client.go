package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"

// Client calls one Quita server with one API key (or one dashboard token).
// It is safe for concurrent use; create it once and share it.
type Client struct {
	base   *url.URL
	apiKey string
	token  string
	// account, when set, is sent as Quita-Account (WithAccount).
	account string
	// hc is the caller's *http.Client (WithHTTPClient), never modified;
	// http is the copy requests go through, which refuses redirects to
	// another origin (sameOriginOnly).
	hc    *http.Client
	http  *http.Client
	retry RetryPolicy
	ua    string
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	// strict refuses answers with fields the SDK does not know (tests
	// use it to catch drift from the server).
	strict bool

	// Charges are Pix charges (/v1/charges), in the public vocabulary.
	Charges *ChargesService
	// Payments are the same charges in the transaction wire format
	// (/v1/payments), with refunds, cancel, stats and receipts.
	Payments *PaymentsService
	// Wallets are the account's balances (/v1/wallets).
	Wallets *WalletsService
	// Webhooks manage endpoints and list deliveries (/v1/webhooks).
	Webhooks *WebhooksService
	// Auth logs in to the dashboard (/v1/auth), for APIKeys.
	Auth *AuthService
	// APIKeys issue, list, rotate and revoke keys (/v1/api-keys); they
	// need a dashboard token (WithToken), not an API key.
	APIKeys *APIKeysService
	// TestHelpers drive test-mode charges: pay, expire, fail a refund.
	TestHelpers *TestHelpersService
	// Events read the account's events back (/v1/events): list, get,
	// and follow new ones by long-polling.
	Events *EventsService
	// Payouts withdraw the available balance to a Pix key (/v1/payouts).
	Payouts *PayoutsService
	// Subscriptions are recurring Pix charges under the payer's mandate
	// (Pix Automático, /v1/subscriptions).
	Subscriptions *SubscriptionsService
	// Subaccounts are a marketplace's sellers (/v1/subaccounts).
	Subaccounts *SubaccountsService
	// Transfers move money between a platform and its sub-accounts
	// (/v1/transfers).
	Transfers *TransfersService
}

// RetryPolicy is how a Client retries a request that failed in a way a
// retry may fix. The zero value of a field takes its default.
type RetryPolicy struct {
	// MaxRetries is how many times a request is sent again after its
	// first attempt (default 3). A negative value disables retries.
	MaxRetries int
	// BaseDelay is the first backoff (default 250 ms); each retry doubles
	// it, with full jitter, up to MaxDelay (default 8 s).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter caps how long a server's Retry-After may make the
	// client wait before one retry (default 30 s); a longer wait returns
	// the error instead.
	MaxRetryAfter time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries == 0 {
		p.MaxRetries = 3
	}
	if p.MaxRetries < 0 {
		p.MaxRetries = 0
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 250 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 8 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 30 * time.Second
	}
	return p
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests through hc (default: a client with a 30 s
// timeout per attempt). The client uses a copy of hc that never follows a
// redirect to another scheme, host or port (ErrCrossOriginRedirect), so
// the API key stays with the server it was meant for; hc is not modified.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithRetryPolicy replaces the retry policy.
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p.withDefaults() } }

// WithMaxRetries sets RetryPolicy.MaxRetries, keeping the other fields;
// 0 after this option means no retries.
func WithMaxRetries(n int) Option {
	return func(c *Client) {
		c.retry.MaxRetries = max(n, 0)
	}
}

// WithToken authenticates with a dashboard token (from Auth.Login) as
// "Authorization: Bearer <token>", which the APIKeys routes need.
func WithToken(token string) Option { return func(c *Client) { c.token = strings.TrimSpace(token) } }

// WithUserAgent prefixes the User-Agent header with your application's
// name, e.g. "loja/1.4".
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.ua = ua + " " + c.ua }
}

// New returns a client of the server at baseURL, the API base including
// /v1 (e.g. "http://127.0.0.1:8080/v1"), authenticated with apiKey (a
// live or test key; empty for a client that only logs in to the
// dashboard). It panics if baseURL is not an absolute http or https URL:
// that is a programming error, not a runtime condition.
func New(baseURL, apiKey string, opts ...Option) *Client {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("quita client: base URL %q must be an absolute http(s) URL such as https://api.example.com/v1", baseURL))
	}
	c := &Client{
		base: u, apiKey: strings.TrimSpace(apiKey),
		hc:    defaultHTTPClient(),
		retry: RetryPolicy{}.withDefaults(),
		ua:    "quita-go/" + Version,
		now:   time.Now,
		sleep: sleepCtx,
	}
	for _, o := range opts {
		o(c)
	}
	c.init()
	return c
}

func defaultHTTPClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

func (c *Client) init() {
	c.http = sameOriginOnly(c.hc)
	c.Charges = &ChargesService{c}
	c.Payments = &PaymentsService{c}
	c.Wallets = &WalletsService{c}
	c.Webhooks = &WebhooksService{c}
	c.Auth = &AuthService{c}
	c.APIKeys = &APIKeysService{c}
	c.TestHelpers = &TestHelpersService{c}
	c.Events = &EventsService{c}
	c.Payouts = &PayoutsService{c}
	c.Subscriptions = &SubscriptionsService{c}
	c.Subaccounts = &SubaccountsService{c}
	c.Transfers = &TransfersService{c}
}

// With returns a copy of c with more options applied, e.g.
// c.With(WithToken(session.Token)) for the dashboard routes.
func (c *Client) With(opts ...Option) *Client {
	cp := *c
	for _, o := range opts {
		o(&cp)
	}
	cp.init()
	return &cp
}

// BaseURL returns the API base the client calls.
func (c *Client) BaseURL() string { return c.base.String() }

// NewIdempotencyKey returns a fresh random key ("idem_" and 32 hex
// digits), the kind the client generates for a write that has none. Keep
// the key of a business operation (e.g. with the order) to retry it
// yourself across process restarts.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24
	return "idem_" + hex.EncodeToString(b[:])
}

// retryClass says when a request may be sent again.
type retryClass int

const (
	// safeToRetry: a read, or a write carrying an idempotency key; the
	// server answers a retry with the original result.
	safeToRetry retryClass = iota
	// notSentOnly: a write without a key; retried only when the server
	// cannot have acted (429, 503 service_unavailable, a refused
	// connection).
	notSentOnly
)

// request is one API call.
type request struct {
	method string
	path   string // below the base, starting with "/"
	query  url.Values
	body   any // JSON-encoded when not nil
	// idemKey is sent as Idempotency-Key (the charges surface, payouts,
	// and the other writes that were given one: keyedWrite).
	idemKey string
	class   retryClass
	// bearer authenticates with the dashboard token instead of apikey.
	bearer bool
	// noAuth sends no credentials.
	noAuth bool
}

// keyedWrite makes r, a write that is not a money write, carry key as
// Idempotency-Key when the caller gave one: the server then answers a
// retry with the first result, so r is as safe to retry as a money write.
// Without a key it is retried only when the server cannot have acted.
func keyedWrite(r request, key string) request {
	if key == "" {
		r.class = notSentOnly
		return r
	}
	r.idemKey, r.class = key, safeToRetry
	return r
}

// Response carries what a call's HTTP answer said beyond its body.
type Response struct {
	StatusCode int
	// RequestID is the server's X-Request-Id of the last attempt.
	RequestID string
	// Replayed is true when the server answered from its idempotency
	// record (Idempotent-Replayed: true): the operation had already run.
	Replayed bool
	// Attempts is how many times the request was sent.
	Attempts int
}

// maxResponse bounds a response body the client reads.
const maxResponse = 16 << 20

// do sends r, retrying as the policy allows, and decodes a 2xx body into
// out (when not nil).
func (c *Client) do(ctx context.Context, r request, out any) (*Response, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("quita: encode %s %s: %w", r.method, r.path, err)
		}
	}
	u := *c.base
	u.Path += r.path
	u.RawPath = ""
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	meta := &Response{}
	for attempt := 0; ; attempt++ {
		meta.Attempts = attempt + 1
		status, body, hdr, err := c.send(ctx, r, u.String(), payload)
		if err == nil && status >= 200 && status < 300 {
			meta.StatusCode, meta.RequestID = status, hdr.Get("X-Request-Id")
			meta.Replayed = hdr.Get("Idempotent-Replayed") == "true"
			if out != nil && len(bytes.TrimSpace(body)) > 0 {
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.UseNumber()
				if c.strict {
					dec.DisallowUnknownFields()
				}
				if err := dec.Decode(out); err != nil {
					return meta, fmt.Errorf("quita: decode %s %s (request %s): %w", r.method, r.path, meta.RequestID, err)
				}
			}
			return meta, nil
		}
		var apiErr *Error
		if err == nil {
			apiErr = parseError(status, body, hdr, c.now())
			meta.StatusCode, meta.RequestID = status, apiErr.RequestID
			err = apiErr
		} else if ctx.Err() != nil {
			return meta, fmt.Errorf("quita: %s %s: %w", r.method, r.path, ctx.Err())
		}
		wait, retry := c.shouldRetry(r.class, err, apiErr, attempt)
		if !retry {
			if apiErr != nil {
				return meta, apiErr
			}
			return meta, fmt.Errorf("quita: %s %s failed after %d attempt(s): %w", r.method, r.path, meta.Attempts, err)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return meta, fmt.Errorf("quita: %s %s: waiting to retry after %v: %w", r.method, r.path, apiErrOr(apiErr, err), err)
		}
	}
}

func apiErrOr(apiErr *Error, err error) error {
	if apiErr != nil {
		return apiErr
	}
	return err
}

// send makes one attempt and reads the whole answer.
func (c *Client) send(ctx context.Context, r request, u string, payload []byte) (int, []byte, http.Header, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.idemKey != "" {
		req.Header.Set("Idempotency-Key", r.idemKey)
	}
	switch {
	case r.noAuth:
	case r.bearer:
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
	default:
		if c.apiKey != "" {
			req.Header.Set("apikey", c.apiKey)
		}
		if c.account != "" {
			req.Header.Set("Quita-Account", c.account)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read response: %w", err)
	}
	return resp.StatusCode, b, resp.Header, nil
}

// pathID escapes one id for a path segment.
func pathID(id string) string { return url.PathEscape(id) }
