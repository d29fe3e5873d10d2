// Package e2e_test drives a real, listening Quita server over HTTP, on
// Postgres with Redis and on SQLite with the in-process idempotency cache.
package e2e_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// backend is one storage configuration every flow runs on.
type backend struct {
	name string
	// redis reports whether the server uses Redis (url and prefix set).
	redis bool
}

var backends = []backend{
	{name: "postgres+redis", redis: true},
	{name: "sqlite+memory", redis: false},
}

// env is a running server on one backend.
type env struct {
	b           backend
	srv         *quitatest.Server
	clock       *quitatest.Clock
	redisURL    string
	redisPrefix string
}

// newEnv starts a server on b with its own database (and Redis prefix).
// opts may change the options before the server starts.
func newEnv(t *testing.T, b backend, opts ...func(*quitatest.Options)) *env {
	t.Helper()
	clock := quitatest.NewClock()
	o := quitatest.Options{Clock: clock}
	if b.redis {
		url, prefix := testenv.RedisURL(t)
		o.DatabaseURL = testenv.PostgresDSN(t)
		o.RedisURL, o.RedisPrefix = url, prefix
	} else {
		o.DatabaseURL = testenv.SQLiteDSN(t)
	}
	for _, f := range opts {
		f(&o)
	}
	srv := quitatest.NewServer(t, o)
	c, ok := srv.Clock.(*quitatest.Clock)
	if !ok {
		t.Fatalf("srv.Clock is %T, want *quitatest.Clock", srv.Clock)
	}
	return &env{b: b, srv: srv, clock: c, redisURL: o.RedisURL, redisPrefix: o.RedisPrefix}
}

// eachBackend runs fn as a parallel subtest per backend.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// account is a merchant with clients for its two keys.
type account struct {
	quitatest.Account
	test *client
	live *client
}

func (e *env) newAccount(t *testing.T, name string) account {
	t.Helper()
	a := e.srv.NewAccount(t, name)
	return account{Account: a, test: e.client(a.TestKey), live: e.client(a.LiveKey)}
}

// httpClient allows many connections per host for the concurrency tests.
// Every exchange is checked against api/openapi.yaml (openapi_test.go).
var httpClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: contractTransport{next: &http.Transport{MaxIdleConnsPerHost: 100, MaxConnsPerHost: 0}},
}

// client calls the API with one apikey ("" sends none).
type client struct {
	base string
	key  string
}

func (e *env) client(key string) *client {
	return &client{base: e.srv.BaseURL, key: key}
}

// response is a fully read HTTP answer.
type response struct{ *testkit.Response }

// hdr is a set of request headers; a value of "-" removes a default header.
type hdr = testkit.Header

// do sends method path with body: nil (no body), string or []byte (sent
// as is) or any other value (JSON-encoded). Content-Type defaults to
// application/json when there is a body. A transport error fails the test.
func (c *client) do(t *testing.T, method, path string, body any, h hdr) *response {
	t.Helper()
	r, err := c.send(method, path, body, h)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send is do for goroutines other than the test's: it returns errors.
func (c *client) send(method, path string, body any, h hdr) (*response, error) {
	url := path
	if !strings.HasPrefix(path, "http") {
		url = c.base + path
	}
	all := hdr{}
	if c.key != "" {
		all["apikey"] = c.key
	}
	for k, v := range h {
		all[k] = v
	}
	r, err := testkit.Send(httpClient, method, url, body, all)
	if err != nil {
		return nil, err
	}
	return &response{r}, nil
}

// want fails the test unless the status is status.
func (r *response) want(t *testing.T, status int) *response {
	t.Helper()
	r.Want(t, status)
	return r
}

func (r *response) charge(t *testing.T) charge {
	t.Helper()
	var c charge
	r.Decode(t, &c)
	return c
}

// keys is the top-level key set of a JSON object body.
func (r *response) keys(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	r.Decode(t, &m)
	return m
}

// apiErr checks the error envelope (status, code, param, request id in
// body and header) and returns it.
func (r *response) apiErr(t *testing.T, status int, code, param string) errorEnvelope {
	t.Helper()
	r.want(t, status)
	var env errorEnvelope
	r.Decode(t, &env)
	// The envelope holds exactly error and request_id.
	top := r.keys(t)
	if len(top) != 2 || top["error"] == nil || top["request_id"] == nil {
		t.Errorf("envelope keys %v, want error and request_id", sortedKeys(top))
	}
	if env.Error.Type == "" || env.Error.Message == "" {
		t.Errorf("error type or message empty: %s", r.Body)
	}
	if code != "" && env.Error.Code != code {
		t.Errorf("error.code %q, want %q; body %s", env.Error.Code, code, r.Body)
	}
	if env.Error.Param != param {
		t.Errorf("error.param %q, want %q; body %s", env.Error.Param, param, r.Body)
	}
	if !strings.HasPrefix(env.RequestID, "req_") || r.Header.Get("X-Request-Id") != env.RequestID {
		t.Errorf("request_id %q, X-Request-Id %q: want equal and req_-prefixed", env.RequestID, r.Header.Get("X-Request-Id"))
	}
	return env
}

type errorEnvelope struct {
	Error struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// charge is the public charge as a client decodes it.
type charge struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        int64             `json:"amount"`
	Currency      string            `json:"currency"`
	Status        string            `json:"status"`
	PaymentMethod string            `json:"payment_method"`
	Customer      map[string]string `json:"customer"`
	Pix           *struct {
		BRCode       string    `json:"br_code"`
		QRCodeURL    string    `json:"qr_code_url"`
		QRCodeBase64 string    `json:"qr_code_base64"`
		ExpiresAt    time.Time `json:"expires_at"`
		TxID         string    `json:"txid"`
	} `json:"pix"`
	CheckoutURL        string            `json:"checkout_url"`
	Settlement         map[string]string `json:"settlement"`
	Metadata           map[string]any    `json:"metadata"`
	ExpectedPayerTaxID string            `json:"expected_payer_tax_id"`
	CreatedAt          time.Time         `json:"created_at"`
}

// raw is the id without its ch_ prefix.
func (c charge) raw() string { return strings.TrimPrefix(c.ID, "ch_") }

type chargeList struct {
	Object     string   `json:"object"`
	Data       []charge `json:"data"`
	HasMore    bool     `json:"has_more"`
	NextCursor *string  `json:"next_cursor"`
}

var keySeq atomic.Int64

// newKey returns a fresh Idempotency-Key.
func newKey() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "e2e-" + hex.EncodeToString(b) + "-" + itoa(keySeq.Add(1))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// create posts body to path (/charges or /pix/charges) under a fresh key.
func (c *client) create(t *testing.T, path string, body any) *response {
	t.Helper()
	return c.do(t, http.MethodPost, path, body, hdr{"Idempotency-Key": newKey()})
}

// mustCreate creates a charge and returns it.
func (c *client) mustCreate(t *testing.T, body any) charge {
	t.Helper()
	return c.create(t, "/charges", body).want(t, http.StatusCreated).charge(t)
}

func (c *client) get(t *testing.T, id string) *response {
	t.Helper()
	return c.do(t, http.MethodGet, "/charges/"+id, nil, nil)
}

func (c *client) pay(t *testing.T, id string, body any) *response {
	t.Helper()
	return c.do(t, http.MethodPost, "/test_helpers/charges/"+id+"/pay", body, nil)
}

func (c *client) list(t *testing.T, query string) chargeList {
	t.Helper()
	var l chargeList
	c.do(t, http.MethodGet, "/charges"+query, nil, nil).want(t, http.StatusOK).Decode(t, &l)
	return l
}

// listAll follows next_cursor through every page.
func (c *client) listAll(t *testing.T, query string, limit int) (ids []string, pages int) {
	t.Helper()
	sep := "?"
	if query != "" {
		sep = "&"
	}
	cursor := ""
	for {
		q := query + sep + "limit=" + itoa(int64(limit))
		if cursor != "" {
			q += "&starting_after=" + cursor
		}
		l := c.list(t, q)
		pages++
		for _, ch := range l.Data {
			ids = append(ids, ch.ID)
		}
		if !l.HasMore {
			if l.NextCursor != nil {
				t.Errorf("has_more false but next_cursor %q", *l.NextCursor)
			}
			return ids, pages
		}
		if l.NextCursor == nil || len(l.Data) != limit {
			t.Fatalf("has_more true with next_cursor %v and %d items (limit %d)", l.NextCursor, len(l.Data), limit)
		}
		cursor = *l.NextCursor
		if pages > 1000 {
			t.Fatal("pagination does not end")
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// pixBody is the smallest valid create body.
func pixBody(amount int64) map[string]any {
	return map[string]any{"amount": amount, "payment_method": "pix"}
}
