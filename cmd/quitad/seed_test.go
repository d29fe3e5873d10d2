package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
)

// served is a quitad serve running in the test.
type served struct {
	addr           string
	stdout, stderr *testkit.Buffer
	stop           func()
}

func startServe(t *testing.T, args []string, getenv func(string) string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "-addr", "127.0.0.1:0"}, args...), getenv, s.stdout, s.stderr)
	}()
	var once bool
	s.stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(25 * time.Second):
			t.Error("serve did not stop")
		}
	}
	t.Cleanup(s.stop)
	addrRe := regexp.MustCompile(`"msg":"quitad listening","addr":"([0-9.:]+)"`)
	for deadline := time.Now().Add(20 * time.Second); s.addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addrRe.FindStringSubmatch(s.stderr.String()); m != nil {
			s.addr = m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned %v; stderr:\n%s", err, s.stderr.String())
		default:
		}
	}
	if s.addr == "" {
		t.Fatalf("server did not start; stderr:\n%s", s.stderr.String())
	}
	return s
}

func (s *served) login(t *testing.T, email, password string) int {
	t.Helper()
	resp, err := http.Post("http://"+s.addr+"/v1/auth/login", "application/json",
		strings.NewReader(`{"email":"`+email+`","password":"`+password+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// security.md, item 1: a Postgres database is never seeded unless asked, and
// the old fixed demo password opens nothing.
func TestServeDoesNotSeedPostgresByDefault(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	s := startServe(t, []string{"-database-url", dsn}, noEnv)
	if strings.Contains(s.stdout.String(), "Demo account") || strings.Contains(s.stderr.String(), "DEMO ACCOUNT") {
		t.Fatalf("Postgres was seeded:\n%s", s.stdout.String())
	}
	if code := s.login(t, demoEmail, "demo-password-change-me"); code != http.StatusUnauthorized {
		t.Errorf("the old demo login answered %d", code)
	}
	s.stop()
	cfg, _ := parseConfig("quitad", []string{"-database-url", dsn}, noEnv)
	a, cleanup, err := openAdmin(context.Background(), cfg, &testkit.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if n, err := a.Accounts.CountAccounts(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d accounts (%v), want none", n, err)
	}
}

func TestShouldSeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		db, acq  string
		mode     seedMode
		want     bool
		wantFail bool
	}{
		{"sqlite default", "sqlite:quita.db", "", seedAuto, true, false},
		{"sqlite memory", "sqlite::memory:", "", seedAuto, true, false},
		{"postgres default", "postgres://db/quita", "", seedAuto, false, false},
		{"postgres asked", "postgres://db/quita", "", seedOn, true, false},
		{"sqlite off", "sqlite:quita.db", "", seedOff, false, false},
		{"bcbpix default", "sqlite:quita.db", wiring.AcquirerBCBPix, seedAuto, false, false},
		{"bcbpix asked", "postgres://db/quita", wiring.AcquirerBCBPix, seedOn, false, true},
	} {
		cfg := Config{SeedDemo: tc.mode}
		cfg.DatabaseURL, cfg.Acquirer = tc.db, tc.acq
		got, err := shouldSeed(cfg)
		if got != tc.want || (err != nil) != tc.wantFail {
			t.Errorf("%s: %v %v, want %v (error %v)", tc.name, got, err, tc.want, tc.wantFail)
		}
	}
	for _, tc := range []struct {
		env  string
		args []string
		want seedMode
	}{
		{"", nil, seedAuto},
		{"true", nil, seedOn},
		{"false", nil, seedOff},
		{"true", []string{"-seed-demo=false"}, seedOff},
		{"", []string{"-seed-demo"}, seedOn},
	} {
		cfg, err := parseConfig("quitad", tc.args, func(k string) string { return map[string]string{"QUITA_SEED_DEMO": tc.env}[k] })
		if err != nil || cfg.SeedDemo != tc.want {
			t.Errorf("env %q args %v: %q %v, want %q", tc.env, tc.args, cfg.SeedDemo, err, tc.want)
		}
	}
	if _, err := parseConfig("quitad", nil, func(k string) string { return map[string]string{"QUITA_SEED_DEMO": "yes please"}[k] }); err == nil {
		t.Error("QUITA_SEED_DEMO=yes please was accepted")
	}
	if err := run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", "-database-url", "sqlite::memory:", "-seed-demo",
		"-acquirer", "bcbpix"}, noEnv, &testkit.Buffer{}, &testkit.Buffer{}); err == nil || !strings.Contains(err.Error(), "bcbpix") {
		t.Errorf("seeding with bcbpix: %v", err)
	}
}

func TestTrustedProxiesSetting(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig("quitad", []string{"-trusted-proxies", "10.0.0.0/8, 192.0.2.1"}, noEnv)
	if err != nil || len(cfg.TrustedProxies) != 2 {
		t.Fatalf("%v %v", cfg.TrustedProxies, err)
	}
	if cfg, err := parseConfig("quitad", nil, noEnv); err != nil || len(cfg.TrustedProxies) != 0 {
		t.Fatalf("default trusts %v (%v)", cfg.TrustedProxies, err)
	}
	if _, err := parseConfig("quitad", nil, func(k string) string {
		return map[string]string{"QUITA_TRUSTED_PROXIES": "10.0.0.0/33"}[k]
	}); err == nil {
		t.Error("a bad CIDR was accepted")
	}
}
