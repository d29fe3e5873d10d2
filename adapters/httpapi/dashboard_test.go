package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
	"github.com/quitapix/quita/quitatest"
)

const (
	jwtSecret = "test-secret-0123456789abcdef0123456789abcdef"
	password  = "correct horse battery staple"
	payerCPF  = "529.982.247-25"
	payerNorm = "52998224725"
)

// syncBuffer collects a server's logs from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is one test's world: servers on one Postgres database and one Redis
// prefix, every log they write, and every secret the test saw, checked
// against those logs when the test ends.
type env struct {
	t       *testing.T
	dsn     string
	redis   string
	prefix  string
	logs    *syncBuffer
	mu      sync.Mutex
	secrets []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dsn := testenv.PostgresDSN(t)
	redisURL, prefix := testenv.RedisURL(t)
	e := &env{t: t, dsn: dsn, redis: redisURL, prefix: prefix, logs: &syncBuffer{}}
	e.secret(password, payerCPF, payerNorm, jwtSecret)
	t.Cleanup(e.checkLogs)
	return e
}

// secretsIn remembers every secret-looking string field of a JSON answer
// (keys, webhook secrets, tokens) for the log check.
func (e *env) secretsIn(body []byte) {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return
	}
	var walk func(k string, v any)
	walk = func(k string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for kk, vv := range x {
				walk(kk, vv)
			}
		case []any:
			for _, vv := range x {
				walk(k, vv)
			}
		case string:
			lk := strings.ToLower(k)
			if strings.Contains(lk, "secret") || strings.Contains(lk, "apikey") || strings.Contains(lk, "token") {
				e.secret(x)
			}
		}
	}
	walk("", v)
}

func (e *env) secret(s ...string) {
	e.mu.Lock()
	e.secrets = append(e.secrets, s...)
	e.mu.Unlock()
}

// checkLogs runs after the servers stopped (cleanups run last-in first-out
// and servers are started after newEnv).
func (e *env) checkLogs() {
	logs := e.logs.String()
	if logs == "" {
		e.t.Error("no logs captured: the leak check would be vacuous")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.secrets {
		if s != "" && strings.Contains(logs, s) {
			e.t.Errorf("logs contain a secret (%d chars starting %.6q)", len(s), s)
		}
	}
}

func (e *env) server(clock *quitatest.Clock) *quitatest.Server {
	e.t.Helper()
	opts := quitatest.Options{DatabaseURL: e.dsn, RedisURL: e.redis, RedisPrefix: e.prefix, Log: e.logs, JWTSecret: jwtSecret}
	if clock != nil {
		opts.Clock = clock
	}
	return quitatest.NewServer(e.t, opts)
}

type merchant struct {
	quitatest.Account
	Email string
}

var seq struct {
	sync.Mutex
	n int
}

func (e *env) account(srv *quitatest.Server, name string) merchant {
	e.t.Helper()
	seq.Lock()
	seq.n++
	email := "owner" + strconv.Itoa(seq.n) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "@dash.example.com"
	seq.Unlock()
	a, err := srv.App.Accounts.CreateAccount(context.Background(), app.NewAccountInput{Name: name, Email: email, Password: password})
	if err != nil {
		e.t.Fatalf("create account: %v", err)
	}
	e.secret(a.LiveKey, a.TestKey, a.TransactionWebhookSecret)
	return merchant{Account: a, Email: email}
}

// resp is a fully read answer of the dashboard tests.
type resp struct{ *testkit.Response }

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	r.Decode(t, &m)
	return m
}

func (r resp) errCode() (string, string) {
	e := r.Error()
	return e.Type, e.Code
}

// call sends body ("" = none) with the headers in hdr.
func call(t *testing.T, method, url string, hdr map[string]string, body string) resp {
	t.Helper()
	var b any
	if body != "" {
		b = body
	}
	return resp{testkit.Do(t, method, url, b, hdr)}
}

func bearerHdr(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}
func keyHdr(key string) map[string]string { return map[string]string{"apikey": key} }

func (e *env) login(srv *quitatest.Server, m merchant) string {
	e.t.Helper()
	r := call(e.t, http.MethodPost, srv.BaseURL+"/auth/login", nil, `{"email":"`+m.Email+`","password":"`+password+`"}`)
	if r.Status != http.StatusOK {
		e.t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	tok, _ := r.json(e.t)["token"].(string)
	e.secret(tok)
	return tok
}

func expectError(t *testing.T, r resp, status int, typ, code string) {
	t.Helper()
	gotType, gotCode := r.errCode()
	if r.Status != status || gotType != typ || (code != "" && gotCode != code) {
		t.Fatalf("got %d %s/%s, want %d %s/%s: %s", r.Status, gotType, gotCode, status, typ, code, r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Error("error without X-Request-Id")
	}
}

func TestLoginAndLogout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	m := e.account(srv, "Loja Login")

	r := call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, `{"email":"`+strings.ToUpper(m.Email)+`","password":"`+password+`"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	body := r.json(t)
	token, _ := body["token"].(string)
	e.secret(token)
	exp, err := time.Parse(time.RFC3339, body["expiresAt"].(string))
	if token == "" || err != nil || body["accountId"] != m.AccountID {
		t.Fatalf("login body: %s", r.Body)
	}
	if d := time.Until(exp); d < 11*time.Hour || d > 12*time.Hour+time.Minute {
		t.Errorf("expiresAt in %v, want 12 h", d)
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"sub", "account", "exp", "jti"} {
		if claims[c] == nil {
			t.Errorf("token lacks claim %q", c)
		}
	}
	if claims["account"] != m.AccountID || claims["sub"] != m.UserID {
		t.Errorf("claims %v", claims)
	}

	bad := []struct {
		name, body    string
		status        int
		typ, code     string
		sameAsUnknown bool
	}{
		{"wrong password", `{"email":"` + m.Email + `","password":"wrong password!"}`, 401, "authentication_error", "invalid_credentials", true},
		{"unknown email", `{"email":"nobody@dash.example.com","password":"` + password + `"}`, 401, "authentication_error", "invalid_credentials", true},
		{"missing password", `{"email":"` + m.Email + `"}`, 400, "invalid_request_error", "parameter_missing", false},
		{"missing email", `{"password":"x"}`, 400, "invalid_request_error", "parameter_missing", false},
		{"unknown field", `{"email":"a@b.c","password":"x","admin":true}`, 400, "invalid_request_error", "parameter_unknown", false},
		{"not json", `{`, 400, "invalid_request_error", "body_invalid", false},
		{"no body", ``, 400, "invalid_request_error", "body_missing", false},
	}
	var msgs []string
	for _, tc := range bad {
		r := call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, tc.body)
		t.Run(tc.name, func(t *testing.T) { expectError(t, r, tc.status, tc.typ, tc.code) })
		if tc.sameAsUnknown {
			var b struct{ Error map[string]any }
			_ = json.Unmarshal(r.Body, &b)
			msgs = append(msgs, b.Error["message"].(string))
		}
	}
	if msgs[0] != msgs[1] {
		t.Errorf("wrong password and unknown e-mail answer differently: %q vs %q", msgs[0], msgs[1])
	}

	if r := call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(token), ""); r.Status != http.StatusOK {
		t.Fatalf("token refused before logout: %d %s", r.Status, r.Body)
	}
	if r := call(t, http.MethodPost, srv.BaseURL+"/auth/logout", bearerHdr(token), ""); r.Status != http.StatusNoContent {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	// The token is refused on this server and on another process.
	other := e.server(nil)
	for _, base := range []string{srv.BaseURL, other.BaseURL} {
		expectError(t, call(t, http.MethodGet, base+"/api-keys", bearerHdr(token), ""), 401, "authentication_error", "token_invalid")
		expectError(t, call(t, http.MethodPost, base+"/auth/logout", bearerHdr(token), ""), 401, "authentication_error", "token_invalid")
	}
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/auth/logout", nil, ""), 401, "authentication_error", "token_missing")
	// A new login still works.
	if tok := e.login(other, m); tok == token {
		t.Error("new login returned the logged-out token")
	}
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	m := e.account(srv, "Loja Throttle")
	wrong := `{"email":"` + m.Email + `","password":"not the password"}`
	for i := range 5 {
		expectError(t, call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, wrong), 401, "authentication_error", "invalid_credentials")
		_ = i
	}
	// Throttled now, even with the right password, and on another process
	// (the counters live in Redis).
	other := e.server(nil)
	for _, base := range []string{srv.BaseURL, other.BaseURL} {
		r := call(t, http.MethodPost, base+"/auth/login", nil, `{"email":"`+m.Email+`","password":"`+password+`"}`)
		expectError(t, r, 429, "rate_limit_error", "rate_limited")
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 15*60 {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
	}
	// Another e-mail is not affected.
	m2 := e.account(srv, "Loja Outra")
	e.login(srv, m2)
}

// Without Redis the throttle is per process and ends with its window.
func TestLoginThrottleWindowEnds(t *testing.T) {
	t.Parallel()
	clock := quitatest.NewClock()
	srv := quitatest.NewServer(t, quitatest.Options{Clock: clock, JWTSecret: jwtSecret})
	e := &env{t: t}
	m := e.account(srv, "Loja Janela")
	wrong := `{"email":"` + m.Email + `","password":"not the password"}`
	for range 5 {
		call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, wrong)
	}
	right := `{"email":"` + m.Email + `","password":"` + password + `"}`
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, right), 429, "rate_limit_error", "rate_limited")
	clock.Advance(15*time.Minute + time.Second)
	if r := call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, right); r.Status != http.StatusOK {
		t.Fatalf("after the window: %d %s", r.Status, r.Body)
	}
}

func TestSessionTokenAttacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	m := e.account(srv, "Loja JWT")
	good := e.login(srv, m)

	now := time.Now()
	valid := jwt.MapClaims{"sub": m.UserID, "account": m.AccountID, "jti": "ses_forged", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
	sign := func(method jwt.SigningMethod, key any, c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(method, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	withClaim := func(k string, v any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range valid {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	parts := strings.Split(good, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tamperedPayload := strings.Replace(string(payload), m.AccountID, "acct_someoneelse000000000000", 1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(tamperedPayload)) + "." + parts[2]
	none := sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid)

	// The control: a correctly signed forged token would pass, so each
	// case below fails for its own reason.
	if r := call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(sign(jwt.SigningMethodHS256, []byte(jwtSecret), valid)), ""); r.Status != 200 {
		t.Fatalf("control token refused: %d %s", r.Status, r.Body)
	}
	cases := map[string]string{
		"alg none":           none,
		"alg none, no sig":   strings.TrimSuffix(none, "."),
		"HS384 same secret":  sign(jwt.SigningMethodHS384, []byte(jwtSecret), valid),
		"HS512 same secret":  sign(jwt.SigningMethodHS512, []byte(jwtSecret), valid),
		"RS256":              sign(jwt.SigningMethodRS256, rsaKey, valid),
		"wrong key":          sign(jwt.SigningMethodHS256, []byte("another-secret-0123456789abcdef0123456789"), valid),
		"expired":            sign(jwt.SigningMethodHS256, []byte(jwtSecret), withClaim("exp", now.Add(-time.Minute).Unix())),
		"no exp":             sign(jwt.SigningMethodHS256, []byte(jwtSecret), withClaim("exp", nil)),
		"no jti":             sign(jwt.SigningMethodHS256, []byte(jwtSecret), withClaim("jti", nil)),
		"no account":         sign(jwt.SigningMethodHS256, []byte(jwtSecret), withClaim("account", nil)),
		"tampered payload":   tampered,
		"signature stripped": parts[0] + "." + parts[1] + ".",
		"garbage":            "not-a-jwt",
	}
	for name, tok := range cases {
		e.secret(tok)
		t.Run(name, func(t *testing.T) {
			expectError(t, call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(tok), ""), 401, "authentication_error", "token_invalid")
		})
	}
	t.Run("basic scheme", func(t *testing.T) {
		r := call(t, http.MethodGet, srv.BaseURL+"/api-keys", map[string]string{"Authorization": "Basic " + good}, "")
		expectError(t, r, 401, "authentication_error", "token_missing")
	})
	t.Run("apikey header instead of token", func(t *testing.T) {
		expectError(t, call(t, http.MethodGet, srv.BaseURL+"/api-keys", keyHdr(m.LiveKey), ""), 403, "permission_error", "api_key_not_allowed")
	})
	t.Run("token instead of apikey", func(t *testing.T) {
		expectError(t, call(t, http.MethodGet, srv.BaseURL+"/charges", bearerHdr(good), ""), 401, "authentication_error", "api_key_missing")
	})
}

type issued struct {
	ID, APIKey, Fingerprint, Prefix, Label string
	CreatedAt                              time.Time
}

func decodeIssued(t *testing.T, r resp) issued {
	t.Helper()
	if r.Status != http.StatusCreated {
		t.Fatalf("issue/rotate: %d %s", r.Status, r.Body)
	}
	var k issued
	if err := json.Unmarshal(r.Body, &k); err != nil {
		t.Fatal(err)
	}
	return k
}

// authenticated reports whether the key is accepted (any answer but 401).
func authenticated(t *testing.T, base, key string) bool {
	t.Helper()
	r := call(t, http.MethodGet, base+"/charges/ch_doesnotexist00000000000", keyHdr(key), "")
	return r.Status != http.StatusUnauthorized
}

func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	other := e.server(nil) // a second quitad process on the same database
	a := e.account(srv, "Loja A")
	b := e.account(srv, "Loja B")
	tokA, tokB := e.login(srv, a), e.login(other, b)

	// Issue.
	r := call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"label":"backend","test":true}`)
	k := decodeIssued(t, r)
	e.secret(k.APIKey)
	mode, err := domain.ParseAPIKey(k.APIKey)
	if err != nil || mode != domain.ModeTest || !strings.HasPrefix(k.APIKey, "qt_test_") || len(k.APIKey) != 40 {
		t.Fatalf("issued key %q: mode %v %v", k.APIKey[:8], mode, err)
	}
	if k.Fingerprint != domain.APIKeyFingerprint(k.APIKey) || k.Prefix != k.APIKey[:12] || k.Label != "backend" ||
		!strings.HasPrefix(k.ID, "key_") || k.CreatedAt.IsZero() {
		t.Fatalf("issued record %+v", k)
	}
	live := decodeIssued(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), ""))
	e.secret(live.APIKey)
	if !strings.HasPrefix(live.APIKey, "qt_live_") || live.Label != "" {
		t.Fatalf("default issue: %q %q", live.APIKey[:8], live.Label)
	}
	if !authenticated(t, other.BaseURL, k.APIKey) || !authenticated(t, srv.BaseURL, live.APIKey) {
		t.Fatal("new keys refused")
	}

	// List: metadata only, this account only.
	r = call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(tokA), "")
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var list struct{ Data []map[string]any }
	_ = json.Unmarshal(r.Body, &list)
	if len(list.Data) != 4 { // two from account creation, two issued
		t.Fatalf("list has %d keys: %s", len(list.Data), r.Body)
	}
	for _, item := range list.Data {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range item {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.Equal(keys, []string{"createdAt", "id", "label", "prefix"}) {
			t.Fatalf("list item fields %v", keys)
		}
	}
	if bytes.Contains(r.Body, []byte(k.APIKey)) || bytes.Contains(r.Body, []byte(k.Fingerprint)) {
		t.Fatal("list leaks a key or fingerprint")
	}
	r = call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(tokB), "")
	if bytes.Contains(r.Body, []byte(k.ID)) {
		t.Fatal("account B lists account A's key")
	}

	// Rotate: the old key is refused at once on the other process.
	r = call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+k.ID+"/rotate", bearerHdr(tokA), `{"label":"rotated"}`)
	k2 := decodeIssued(t, r)
	e.secret(k2.APIKey)
	if k2.ID == k.ID || k2.APIKey == k.APIKey || k2.Label != "rotated" || !strings.HasPrefix(k2.APIKey, "qt_test_") {
		t.Fatalf("rotated %+v", k2)
	}
	if authenticated(t, other.BaseURL, k.APIKey) {
		t.Fatal("rotated-away key still accepted on the second process")
	}
	if !authenticated(t, other.BaseURL, k2.APIKey) {
		t.Fatal("successor key refused")
	}
	// Rotate without a body keeps the label.
	k3 := decodeIssued(t, call(t, http.MethodPost, other.BaseURL+"/api-keys/"+k2.ID+"/rotate", bearerHdr(tokA), ""))
	e.secret(k3.APIKey)
	if k3.Label != "rotated" {
		t.Errorf("label after rotate without body: %q", k3.Label)
	}

	// Revoke: refused at once everywhere; permanent.
	r = call(t, http.MethodDelete, srv.BaseURL+"/api-keys/"+live.ID, bearerHdr(tokA), "")
	if r.Status != 200 || string(bytes.TrimSpace(r.Body)) != `{"revoked":true}` {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if authenticated(t, other.BaseURL, live.APIKey) || authenticated(t, srv.BaseURL, live.APIKey) {
		t.Fatal("revoked key still accepted")
	}
	if r := call(t, http.MethodDelete, srv.BaseURL+"/api-keys/"+live.ID, bearerHdr(tokA), ""); r.Status != 200 {
		t.Errorf("revoke again: %d %s", r.Status, r.Body)
	}
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+live.ID+"/rotate", bearerHdr(tokA), ""), 409, "invalid_request_error", "api_key_revoked")

	// 4xx of the key routes.
	long := strings.Repeat("x", 65)
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"label":"`+long+`"}`), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+k3.ID+"/rotate", bearerHdr(tokA), `{"label":"`+long+`"}`), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"test":"yes"}`), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"scope":"all"}`), 400, "invalid_request_error", "parameter_unknown")
	expectError(t, call(t, http.MethodDelete, srv.BaseURL+"/api-keys/key_nope", bearerHdr(tokA), ""), 404, "invalid_request_error", "resource_not_found")
	// mux answers an unknown method under a subrouter as an unknown route
	// (the same as PUT /v1/charges); either way it is refused.
	if r := call(t, http.MethodPut, srv.BaseURL+"/api-keys", bearerHdr(tokA), ""); r.Status != 404 && r.Status != 405 {
		t.Errorf("PUT /api-keys: %d", r.Status)
	}
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/api-keys", nil, ""), 401, "authentication_error", "token_missing")
	// Account B cannot touch A's keys: 404, and the key keeps working.
	expectError(t, call(t, http.MethodDelete, srv.BaseURL+"/api-keys/"+k3.ID, bearerHdr(tokB), ""), 404, "invalid_request_error", "resource_not_found")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+k3.ID+"/rotate", bearerHdr(tokB), ""), 404, "invalid_request_error", "resource_not_found")
	if !authenticated(t, srv.BaseURL, k3.APIKey) {
		t.Fatal("B's attempt revoked A's key")
	}

	// The audit log: issue ×2, rotate ×2 (revoked + issued each), revoke.
	r = call(t, http.MethodGet, srv.BaseURL+"/audit-logs", bearerHdr(tokA), "")
	var audit struct {
		Data []struct{ Action, UserID, KeyID, KeyFingerprint string }
	}
	if err := json.Unmarshal(r.Body, &audit); err != nil || r.Status != 200 {
		t.Fatalf("audit: %d %s", r.Status, r.Body)
	}
	var got []string
	for _, a0 := range audit.Data {
		if a0.UserID != a.UserID || a0.KeyFingerprint == "" || a0.KeyID == "" {
			t.Errorf("audit entry %+v", a0)
		}
		got = append(got, a0.Action+":"+a0.KeyID)
	}
	for _, want := range []string{"api_key.issued:" + k.ID, "api_key.rotated:" + k.ID, "api_key.issued:" + k2.ID,
		"api_key.rotated:" + k2.ID, "api_key.issued:" + k3.ID, "api_key.revoked:" + live.ID} {
		if !slices.Contains(got, want) {
			t.Errorf("audit log lacks %s: %v", want, got)
		}
	}
	if len(got) != 7 {
		t.Errorf("audit log has %d entries, want 7: %v", len(got), got)
	}
	if strings.Contains(string(r.Body), k.APIKey) {
		t.Error("audit log holds a key cleartext")
	}
	r = call(t, http.MethodGet, srv.BaseURL+"/audit-logs", bearerHdr(tokB), "")
	if strings.Contains(string(r.Body), a.UserID) || strings.Contains(string(r.Body), k.ID) {
		t.Error("account B sees A's audit log")
	}
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/audit-logs?limit=0", bearerHdr(tokA), ""), 400, "invalid_request_error", "parameter_invalid")
}

func TestRequestLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	a := e.account(srv, "Loja Logs")
	b := e.account(srv, "Loja Outra")
	tok := e.login(srv, a)

	var ids []string
	for range 3 {
		r := call(t, http.MethodGet, srv.BaseURL+"/charges/ch_missing000000000000000", keyHdr(a.TestKey), "")
		ids = append(ids, r.Header.Get("X-Request-Id"))
	}
	call(t, http.MethodGet, srv.BaseURL+"/charges/ch_missing000000000000000", keyHdr(a.LiveKey), "")
	call(t, http.MethodGet, srv.BaseURL+"/charges/ch_missing000000000000000", keyHdr(b.TestKey), "")
	fp := domain.APIKeyFingerprint(a.TestKey)

	r := call(t, http.MethodGet, srv.BaseURL+"/request-logs?apiKeyFingerprint="+fp+"&limit=2", bearerHdr(tok), "")
	var logs struct {
		Data []struct {
			RequestID, Method, Path, APIKeyFingerprint, Mode string
			Status                                           int
			DurationMs                                       float64
			CreatedAt                                        time.Time
		}
	}
	if err := json.Unmarshal(r.Body, &logs); err != nil || r.Status != 200 {
		t.Fatalf("request logs: %d %s", r.Status, r.Body)
	}
	if len(logs.Data) != 2 {
		t.Fatalf("got %d entries, want 2 (limit): %s", len(logs.Data), r.Body)
	}
	for _, l := range logs.Data {
		if l.Method != "GET" || l.Path != "/v1/charges/{id}" || l.Status != 404 || l.APIKeyFingerprint != fp ||
			l.Mode != "test" || l.DurationMs <= 0 || l.CreatedAt.IsZero() || !slices.Contains(ids, l.RequestID) {
			t.Errorf("entry %+v", l)
		}
	}
	if logs.Data[0].RequestID != ids[2] {
		t.Errorf("newest first: got %s, want %s", logs.Data[0].RequestID, ids[2])
	}
	if strings.Contains(string(r.Body), "ch_missing") {
		t.Error("request logs hold a raw path")
	}
	// Unfiltered: both keys of A, none of B.
	r = call(t, http.MethodGet, srv.BaseURL+"/request-logs", bearerHdr(tok), "")
	_ = json.Unmarshal(r.Body, &logs)
	if len(logs.Data) != 4 {
		t.Errorf("unfiltered: %d entries, want 4", len(logs.Data))
	}
	if strings.Contains(string(r.Body), domain.APIKeyFingerprint(b.TestKey)) {
		t.Error("A sees B's requests")
	}
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/request-logs?limit=101", bearerHdr(tok), ""), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/request-logs?apiKeyFingerprint=abc", bearerHdr(tok), ""), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/request-logs", keyHdr(a.TestKey), ""), 403, "permission_error", "api_key_not_allowed")
}

var pathVar = regexp.MustCompile(`\{[^}]+\}`)

// TestAuthorizationMatrix walks every route of the service and calls it
// with account B's credentials (API keys and dashboard token) on account
// A's objects: never a 2xx for a path naming A's object, only 401, 403 or
// 404, and never any of A's identifiers in any answer.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	a := e.account(srv, "Loja A")
	b := e.account(srv, "Loja B")
	tokB := e.login(srv, b)

	// Account A's objects.
	r := call(t, http.MethodPost, srv.BaseURL+"/charges", map[string]string{"apikey": a.TestKey, "Idempotency-Key": "matrix-charge-a"},
		`{"amount":1000,"payment_method":"pix","customer":{"name":"Ana","document":"`+payerCPF+`"}}`)
	if r.Status != 201 {
		t.Fatalf("create A's charge: %d %s", r.Status, r.Body)
	}
	chargeID := r.json(t)["id"].(string)
	raw, _ := domain.ParseChargeID(chargeID)
	keys, err := srv.App.Dashboard.Keys.List(context.Background(), app.DashboardUser{AccountID: a.AccountID})
	if err != nil || len(keys) == 0 {
		t.Fatal(err)
	}
	keyID := keys[0].ID
	aSecrets := []string{chargeID, raw, keyID, a.AccountID, a.UserID, domain.APIKeyFingerprint(a.TestKey), domain.APIKeyFingerprint(a.LiveKey)}
	objectFor := func(tpl string) string {
		switch {
		case strings.Contains(tpl, "/api-keys/"):
			return keyID
		case strings.Contains(tpl, "/payments/"):
			return raw
		default:
			return chargeID
		}
	}

	router, ok := srv.App.Handler.(*mux.Router)
	if !ok {
		t.Fatalf("handler is %T, not *mux.Router", srv.App.Handler)
	}
	type route struct{ method, tpl string }
	var routes []route
	err = router.Walk(func(rt *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := rt.GetPathTemplate()
		if err != nil || !strings.HasPrefix(tpl, "/v1/") {
			return nil
		}
		methods, err := rt.GetMethods()
		if err != nil {
			return nil // a subrouter's prefix route
		}
		for _, m := range methods {
			routes = append(routes, route{m, tpl})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 8 {
		t.Fatalf("walked only %d routes", len(routes))
	}
	creds := map[string]map[string]string{
		"B test key": {"apikey": b.TestKey},
		"B live key": {"apikey": b.LiveKey},
		"B token":    {"Authorization": "Bearer " + tokB},
	}
	for _, rt := range routes {
		path := pathVar.ReplaceAllStringFunc(rt.tpl, func(string) string { return objectFor(rt.tpl) })
		hasObject := path != rt.tpl
		for credName, hdr := range creds {
			name := rt.method + " " + rt.tpl + " as " + credName
			h := map[string]string{"Idempotency-Key": "matrix-" + strconv.Itoa(len(name)) + "-" + credName[2:6]}
			for k, v := range hdr {
				h[k] = v
			}
			body := ""
			if rt.method == http.MethodPost || rt.method == http.MethodPut || rt.method == http.MethodPatch {
				body = `{}`
			}
			res := call(t, rt.method, srv.URL+path, h, body)
			e.secretsIn(res.Body)
			t.Run(name, func(t *testing.T) {
				for _, s := range aSecrets {
					if bytes.Contains(res.Body, []byte(s)) {
						t.Fatalf("answer %d holds A's identifier %s: %s", res.Status, s, res.Body)
					}
				}
				if !hasObject || slices.Contains([]int{401, 403, 404}, res.Status) {
					return
				}
				// A route that validates its input before it looks the
				// object up may answer 400/422, as long as the answer does
				// not depend on the object: the same as for an id that
				// does not exist.
				ghost := call(t, rt.method, srv.URL+pathVar.ReplaceAllString(rt.tpl, "ch_doesnotexist0000000000000"), h, body)
				gs, gc := ghost.errCode()
				rs, rc := res.errCode()
				if res.Status >= 500 || res.Status < 400 || res.Status != ghost.Status || gs != rs || gc != rc {
					t.Fatalf("B on A's object: %d %s (nonexistent object: %d %s), want 404 (or 401/403)", res.Status, res.Body, ghost.Status, ghost.Body)
				}
				t.Logf("validated before lookup: %d %s/%s for A's object and a missing one alike", res.Status, rs, rc)
			})
		}
	}
	// A's charge is untouched and A's key still works.
	r = call(t, http.MethodGet, srv.BaseURL+"/charges/"+chargeID, keyHdr(a.TestKey), "")
	if r.Status != 200 || r.json(t)["status"] != "pending" {
		t.Fatalf("A's charge after the matrix: %d %s", r.Status, r.Body)
	}
}

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
			logs := &syncBuffer{}
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
