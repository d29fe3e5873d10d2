package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quitapix/quita/cmd/wiring"
)

// bearerStatus is the status of GET /v1/api-keys with token.
func (s *served) bearerStatus(t *testing.T, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.addr+"/v1/api-keys", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// token logs in through the API and returns the session token.
func (s *served) token(t *testing.T, email, password string) string {
	t.Helper()
	resp, err := http.Post("http://"+s.addr+"/v1/auth/login", "application/json",
		strings.NewReader(`{"email":"`+email+`","password":"`+password+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		t.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	return out.Token
}

// `make run` (the embedded SQLite database, no QUITA_JWT_SECRET) keeps
// its dashboard sessions across a restart: the secret is made once, kept
// beside the database with mode 0600, and read again. A real secret
// ignores the file: the development secret's tokens are refused and the
// file is left as it was.
func TestDevSecretKeepsSessionsAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "quita.db")
	s := startServe(t, []string{"-database-url", db}, noEnv)
	pw := regexp.MustCompile(`login demo@quita\.test / ([A-Za-z0-9_-]{24}) `).FindStringSubmatch(s.stdout.String())
	if pw == nil {
		t.Fatalf("no demo password:\n%s", s.stdout.String())
	}
	token := s.token(t, demoEmail, pw[1])
	s.stop()
	logs := s.stderr.String()
	if strings.Contains(logs, "QUITA_JWT_SECRET is empty") || !strings.Contains(logs, "development secret in "+filepath.Join(dir, devSecretName)) {
		t.Errorf("start-up log:\n%s", logs)
	}
	path := filepath.Join(dir, devSecretName)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v", st, err)
	}
	kept, _ := os.ReadFile(path)

	again := startServe(t, []string{"-database-url", db}, noEnv)
	if code := again.bearerStatus(t, token); code != http.StatusOK {
		t.Fatalf("the session after a restart: %d", code)
	}
	again.stop()

	real := func(k string) string {
		return map[string]string{"QUITA_JWT_SECRET": "a-real-secret-set-by-the-operator-000000"}[k]
	}
	withReal := startServe(t, []string{"-database-url", db}, real)
	if code := withReal.bearerStatus(t, token); code != http.StatusUnauthorized {
		t.Errorf("a development token under a real secret: %d", code)
	}
	withReal.stop()
	if strings.Contains(withReal.stderr.String(), "development secret") {
		t.Error("the real secret's start read the development secret")
	}
	if now, _ := os.ReadFile(path); string(now) != string(kept) {
		t.Error("the real secret's start changed the file")
	}

	// With a real secret from the start no file is made.
	fresh := t.TempDir()
	s = startServe(t, []string{"-database-url", "sqlite:" + filepath.Join(fresh, "quita.db")}, real)
	s.stop()
	if _, err := os.Stat(filepath.Join(fresh, devSecretName)); !os.IsNotExist(err) {
		t.Errorf("a real secret made the file: %v", err)
	}
}

// Which setups keep a development secret: only the embedded SQLite file
// with the sandbox and no secret set.
func TestDevSecretFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"embedded", devConfig("sqlite:/data/quita.db", "", ""), "/data/" + devSecretName},
		{"relative", devConfig("sqlite:quita.db", "", ""), devSecretName},
		{"secret set", devConfig("sqlite:/data/quita.db", "set", ""), ""},
		{"in memory", devConfig("sqlite::memory:", "", ""), ""},
		{"postgres", devConfig("postgres://localhost/quita", "", ""), ""},
		{"bcbpix", devConfig("sqlite:/data/quita.db", "", wiring.AcquirerBCBPix), ""},
	} {
		if got := devSecretFile(tc.cfg); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// A file others can read is narrowed; one without a secret refused.
	dir := t.TempDir()
	cfg := devConfig("sqlite:"+filepath.Join(dir, "quita.db"), "", "")
	path := filepath.Join(dir, devSecretName)
	if err := os.WriteFile(path, []byte(strings.Repeat("k", 43)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := useDevSecret(&cfg, newLogger(&strings.Builder{}, "error")); err != nil || cfg.JWTSecret != strings.Repeat("k", 43) {
		t.Fatalf("read: %q %v", cfg.JWTSecret, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.JWTSecret = ""
	if err := useDevSecret(&cfg, newLogger(&strings.Builder{}, "error")); err == nil {
		t.Error("a file without a usable secret was used")
	}
}

func devConfig(db, secret, acquirer string) Config {
	var c Config
	c.DatabaseURL, c.JWTSecret, c.Acquirer = db, secret, acquirer
	return c
}
