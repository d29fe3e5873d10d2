package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

const (
	jwtSecret = "test-secret-0123456789abcdef0123456789abcdef"
	password  = "correct horse battery staple"
	payerCPF  = "529.982.247-25"
	payerNorm = "52998224725"
)

// env is one test's world: servers on one Postgres database and one Redis
// prefix, every log they write, and every secret the test saw, checked
// against those logs when the test ends.
type env struct {
	t       *testing.T
	dsn     string
	redis   string
	prefix  string
	logs    *testkit.Buffer
	mu      sync.Mutex
	secrets []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dsn := testenv.PostgresDSN(t)
	redisURL, prefix := testenv.RedisURL(t)
	e := &env{t: t, dsn: dsn, redis: redisURL, prefix: prefix, logs: &testkit.Buffer{}}
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
	e.secret(a.LiveKey, a.TestKey, a.TransactionWebhookSecret, a.TestTransactionWebhookSecret)
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
