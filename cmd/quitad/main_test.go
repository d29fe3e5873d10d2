package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
)

func noEnv(string) string { return "" }

func TestServeSeedsDemoServesAndShutsDownGracefully(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	s := startServe(t, []string{"-database-url", db}, noEnv)
	// A probe is retried: on a loaded machine the first ping can wait out
	// its one second behind the start-up workers on SQLite's connection.
	for _, path := range []string{"/healthz", "/readyz"} {
		status := 0
		for deadline := time.Now().Add(10 * time.Second); status != http.StatusOK && time.Now().Before(deadline); {
			resp, err := http.Get("http://" + s.addr + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if status = resp.StatusCode; status != http.StatusOK {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if status != http.StatusOK {
			t.Errorf("GET %s = %d for 10 s", path, status)
		}
	}

	// The demo account's test key is printed for the merchant, and works.
	key := regexp.MustCompile(`Test API key: (qt_test_[A-Za-z0-9_-]{32})`).FindStringSubmatch(s.stdout.String())
	if key == nil {
		t.Fatalf("no test key in the start-up message:\n%s", s.stdout.String())
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.addr+"/v1/charges", nil)
	req.Header.Set("apikey", key[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("demo key: GET /v1/charges = %d", resp.StatusCode)
	}

	s.stop() // fails the test unless serve returns nil after the SIGTERM-equivalent cancel
	if !strings.Contains(s.stderr.String(), `"msg":"stopped"`) {
		t.Error("no graceful stop logged")
	}
	if strings.Contains(s.stderr.String(), key[1]) {
		t.Error("the API key cleartext reached the log")
	}
}

// The demo account gets a random password, printed once on stdout and
// never logged, with a loud warning; a restart prints the key again but
// not the password (security.md, item 1).
func TestDemoPasswordIsRandomAndPrintedOnce(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	s := startServe(t, []string{"-database-url", db}, noEnv)
	m := regexp.MustCompile(`login demo@quita\.test / ([A-Za-z0-9_-]{24}) `).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no demo password in the start-up message:\n%s", s.stdout.String())
	}
	if !strings.Contains(s.stderr.String(), `"level":"WARN","msg":"DEMO ACCOUNT CREATED`) {
		t.Errorf("seeding did not warn:\n%s", s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), m[1]) {
		t.Error("the demo password reached the log")
	}
	if code := s.login(t, demoEmail, m[1]); code != http.StatusOK {
		t.Errorf("login with the printed password: %d", code)
	}
	if code := s.login(t, demoEmail, "demo-password-change-me"); code != http.StatusUnauthorized {
		t.Errorf("the old fixed password: %d", code)
	}
	s.stop()
	again := startServe(t, []string{"-database-url", db}, noEnv)
	out := again.stdout.String()
	if !strings.Contains(out, "Test API key: qt_test_") || strings.Contains(out, m[1]) {
		t.Errorf("restart: want the key again and not the password:\n%s", out)
	}
}

func TestAccountCreatePrintsKeysOnce(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	if err := run(context.Background(), []string{"migrate", "-database-url", db}, noEnv, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	var out, errw bytes.Buffer
	args := []string{"account", "create", "--name", "Loja", "--email", "dono@loja.com.br", "--password", "uma-senha-longa", "--database-url", db}
	if err := run(context.Background(), args, noEnv, &out, &errw); err != nil {
		t.Fatalf("account create: %v (%s)", err, errw.String())
	}
	var got map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %q", out.String())
	}
	for k, prefix := range map[string]string{"accountId": "acct_", "userId": "usr_", "liveKey": "qt_live_", "testKey": "qt_test_"} {
		if !strings.HasPrefix(got[k], prefix) {
			t.Errorf("%s = %q, want prefix %s", k, got[k], prefix)
		}
	}
	// The same e-mail again is refused.
	if err := run(context.Background(), args, noEnv, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("a second account with the same e-mail was created")
	}
}

func TestConfigDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	env := map[string]string{"QUITA_ADDR": "0.0.0.0:9000", "QUITA_FEE_PIX_PROVIDER": "60+5"}
	cfg, err := parseConfig("quitad", []string{"-database-url", "sqlite::memory:"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "http://127.0.0.1:9000/v1" || cfg.CheckoutURLBase != "http://127.0.0.1:9000/checkout" {
		t.Errorf("derived URLs %q %q", cfg.BaseURL, cfg.CheckoutURLBase)
	}
	if cfg.DatabaseURL != "sqlite::memory:" {
		t.Errorf("flag did not override: %q", cfg.DatabaseURL)
	}
	if cfg.PixFees.Provider.BPS != 60 || cfg.PixFees.Provider.Fixed != 5 || cfg.PixFees.Platform.BPS != 49 {
		t.Errorf("fees %+v", cfg.PixFees)
	}
	if _, err := parseConfig("quitad", nil, func(k string) string {
		return map[string]string{"QUITA_FEE_PIX_PLATFORM": "1.5"}[k]
	}); err == nil {
		t.Error("a fractional bps fee was accepted")
	}
}

// QUITA_SANDBOX_LATENCY is a Go duration, none by default; the flag wins.
func TestConfigSandboxLatency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		args []string
		want time.Duration
		ok   bool
	}{
		{"", nil, 0, true},
		{"100ms", nil, 100 * time.Millisecond, true},
		{"100ms", []string{"-sandbox-latency", "250ms"}, 250 * time.Millisecond, true},
		{"100", nil, 0, false},
		{"-1s", nil, 0, false},
		{"", []string{"-sandbox-latency", "-1s"}, 0, false},
	} {
		cfg, err := parseConfig("quitad", tc.args, func(k string) string { return map[string]string{"QUITA_SANDBOX_LATENCY": tc.env}[k] })
		if (err == nil) != tc.ok || (tc.ok && cfg.SandboxLatency != tc.want) {
			t.Errorf("env %q, args %q: latency %s, err %v; want %s, ok %v", tc.env, tc.args, cfg.SandboxLatency, err, tc.want, tc.ok)
		}
	}
}

// QUITA_EXPIRY_GRACE is a Go duration, 3 min by default; 0s means none
// (wiring's negative: its zero is the default); the flag wins.
func TestConfigExpiryGrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		args []string
		want time.Duration
		ok   bool
	}{
		{"", nil, app.DefaultExpiryGrace, true},
		{"5m", nil, 5 * time.Minute, true},
		{"5m", []string{"-expiry-grace", "90s"}, 90 * time.Second, true},
		{"0s", nil, -1, true},
		{"3", nil, 0, false},
		{"-1m", nil, 0, false},
		{"", []string{"-expiry-grace", "-1s"}, 0, false},
	} {
		cfg, err := parseConfig("quitad", tc.args, func(k string) string { return map[string]string{"QUITA_EXPIRY_GRACE": tc.env}[k] })
		if (err == nil) != tc.ok || (tc.ok && cfg.ExpiryGrace != tc.want) {
			t.Errorf("env %q, args %q: grace %s, err %v; want %s, ok %v", tc.env, tc.args, cfg.ExpiryGrace, err, tc.want, tc.ok)
		}
	}
}

// `quitad --help` lists the commands and every setting, and succeeds.
func TestHelpListsEverySetting(t *testing.T) {
	t.Parallel()
	if err := run(context.Background(), []string{"--help"}, noEnv, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("--help: %v", err)
	}
}

// QUITA_WEBHOOK_ALLOW_PRIVATE (http and loopback/private webhook URLs) is
// on by default only in the embedded dev default, SQLite with the sandbox;
// with bcbpix (real money) it is off whatever the database, and asking for
// it there refuses to start.
func TestConfigWebhookAllowPrivate(t *testing.T) {
	t.Parallel()
	const sqlite, memory, pg = "sqlite:quita.db", "sqlite::memory:", "postgres://db/quita"
	for _, tc := range []struct {
		name        string
		env         map[string]string
		args        []string
		want        bool
		refusedWith string // "" = accepted
	}{
		{"embedded dev default", nil, []string{"-database-url", sqlite}, true, ""},
		{"in-memory SQLite, sandbox named", nil, []string{"-database-url", memory, "-acquirer", "sandbox"}, true, ""},
		{"Postgres with the sandbox", nil, []string{"-database-url", pg}, false, ""},
		{"SQLite with bcbpix", nil, []string{"-database-url", sqlite, "-acquirer", "bcbpix"}, false, ""},
		{"SQLite with bcbpix from the environment", map[string]string{"QUITA_ACQUIRER": "bcbpix", "QUITA_DATABASE_URL": memory}, nil, false, ""},
		{"Postgres with bcbpix", nil, []string{"-database-url", pg, "-acquirer", "bcbpix"}, false, ""},
		{"asked for on Postgres with the sandbox", map[string]string{"QUITA_WEBHOOK_ALLOW_PRIVATE": "true"}, []string{"-database-url", pg}, true, ""},
		{"turned off on SQLite", map[string]string{"QUITA_WEBHOOK_ALLOW_PRIVATE": "false"}, []string{"-database-url", sqlite}, false, ""},
		{"flag beats the environment", map[string]string{"QUITA_WEBHOOK_ALLOW_PRIVATE": "false"}, []string{"-database-url", pg, "-webhook-allow-private=true"}, true, ""},
		{"turned off with bcbpix", map[string]string{"QUITA_WEBHOOK_ALLOW_PRIVATE": "false"}, []string{"-database-url", sqlite, "-acquirer", "bcbpix"}, false, ""},
		{"asked for with bcbpix on SQLite", map[string]string{"QUITA_WEBHOOK_ALLOW_PRIVATE": "true"}, []string{"-database-url", sqlite, "-acquirer", "bcbpix"}, false, "bcbpix"},
		{"asked for by flag with bcbpix on Postgres", map[string]string{"QUITA_ACQUIRER": "bcbpix"}, []string{"-database-url", pg, "-webhook-allow-private=true"}, false, "bcbpix"},
		{"not a bool", map[string]string{"QUITA_WEBHOOK_ALLOW_PRIVATE": "yes please"}, nil, false, "want true or false"},
	} {
		cfg, err := parseConfig("quitad", tc.args, func(k string) string { return tc.env[k] })
		switch {
		case tc.refusedWith != "":
			if err == nil || !strings.Contains(err.Error(), tc.refusedWith) {
				t.Errorf("%s: accepted (allow private %v, err %v); want an error naming %q", tc.name, cfg.WebhookAllowPrivate, err, tc.refusedWith)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case cfg.WebhookAllowPrivate != tc.want:
			t.Errorf("%s: allow private %v, want %v", tc.name, cfg.WebhookAllowPrivate, tc.want)
		}
	}
}
