package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/quitapix/quita/quitatest"
)

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

// Logging out everywhere ends every session of the user — this one and
// the others, on every process — while another user's stays; a login a
// second later works.
func TestLogoutEverywhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := quitatest.NewClock()
	srv := e.server(clock)
	m := e.account(srv, "Loja Todas as Sessões")
	other := e.account(srv, "Loja Vizinha")
	phone, laptop, neighbour := e.login(srv, m), e.login(srv, m), e.login(srv, other)
	if r := call(t, http.MethodPost, srv.BaseURL+"/auth/logout_all", bearerHdr(phone), ""); r.Status != http.StatusNoContent {
		t.Fatalf("logout_all: %d %s", r.Status, r.Body)
	}
	second := e.server(clock)
	for _, base := range []string{srv.BaseURL, second.BaseURL} {
		for _, tok := range []string{phone, laptop} {
			expectError(t, call(t, http.MethodGet, base+"/api-keys", bearerHdr(tok), ""), 401, "authentication_error", "token_invalid")
		}
		if r := call(t, http.MethodGet, base+"/api-keys", bearerHdr(neighbour), ""); r.Status != http.StatusOK {
			t.Errorf("another user's session after logout_all: %d %s", r.Status, r.Body)
		}
	}
	clock.Advance(time.Second)
	if r := call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(e.login(srv, m)), ""); r.Status != http.StatusOK {
		t.Errorf("a new login after logout_all: %d %s", r.Status, r.Body)
	}
}
