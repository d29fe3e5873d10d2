package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
)

// sharedSecret signs the sessions of every process these tests open, so
// one process's token is judged by another.
const sharedSecret = "a-shared-dashboard-secret-of-32-bytes-at-least"

// withApp opens the application on db (as an admin command does, with
// the shared secret) for fn.
func withApp(t *testing.T, db string, fn func(a *wiring.App)) {
	t.Helper()
	cfg, err := parseConfig("quitad", []string{"-database-url", db}, func(k string) string {
		return map[string]string{"QUITA_JWT_SECRET": sharedSecret}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a, cleanup, err := openAdmin(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	fn(a)
}

// accountPasswordRun runs `quitad account password` and returns its
// output and log.
func accountPasswordRun(t *testing.T, getenv func(string) string, args ...string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	err := run(context.Background(), append([]string{"account", "password"}, args...), getenv, &out, &errw)
	return out.String(), errw.String(), err
}

// `quitad account password` takes the new password from stdin or
// QUITA_ACCOUNT_PASSWORD as `account create` does, never prints it, and
// ends every session of the login; --disable-totp turns two-step
// verification off for an owner locked out of it. Neither command warns
// about the session secret: they serve nothing.
func TestAccountPassword(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	const email = "dona@loja.com.br"
	var createLog bytes.Buffer
	if err := run(context.Background(), []string{"account", "create", "--name", "Loja", "--email", email, "--database-url", db},
		func(k string) string { return map[string]string{"QUITA_ACCOUNT_PASSWORD": "a-senha-de-sempre"}[k] }, io.Discard, &createLog); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(createLog.String(), "QUITA_JWT_SECRET") {
		t.Errorf("account create warned about the session secret: %s", createLog.String())
	}
	ctx := context.Background()
	var token string
	withApp(t, db, func(a *wiring.App) {
		s, err := a.Dashboard.Sessions.Login(ctx, email, "a-senha-de-sempre", "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		token = s.Token
	})
	time.Sleep(time.Second) // the reset ends the tokens of its second too

	// From stdin.
	withStdin(t, "nova-senha-pela-entrada\n")
	out, logs, err := accountPasswordRun(t, noEnv, "--email", strings.ToUpper(email), "--password-stdin", "--database-url", db)
	if err != nil {
		t.Fatalf("account password: %v (%s)", err, logs)
	}
	var got app.LoginReset
	if err := json.Unmarshal([]byte(out), &got); err != nil || !got.PasswordChanged || got.TOTPDisabled || !got.SessionsEnded || got.Email != email {
		t.Fatalf("output %q: %v", out, err)
	}
	if strings.Contains(out+logs, "nova-senha") || strings.Contains(logs, "QUITA_JWT_SECRET") || strings.Contains(logs, "warning") {
		t.Errorf("the password or a secret warning reached the output:\n%s\n%s", out, logs)
	}
	withApp(t, db, func(a *wiring.App) {
		if _, err := a.Dashboard.Sessions.Verify(ctx, token); !errors.Is(err, app.ErrInvalidSession) {
			t.Errorf("the session from before the reset: %v", err)
		}
		if _, err := a.Dashboard.Sessions.Login(ctx, email, "a-senha-de-sempre", "192.0.2.1"); !errors.Is(err, app.ErrInvalidCredentials) {
			t.Errorf("the old password: %v", err)
		}
		if _, err := a.Dashboard.Sessions.Login(ctx, email, "nova-senha-pela-entrada", "192.0.2.1"); err != nil {
			t.Errorf("the password from stdin: %v", err)
		}
	})

	// From the environment, with TOTP on: --disable-totp turns it off too.
	time.Sleep(time.Second) // a session of the reset's second is ended with it
	withApp(t, db, func(a *wiring.App) {
		s, _ := a.Dashboard.Sessions.Login(ctx, email, "nova-senha-pela-entrada", "192.0.2.1")
		u, err := a.Dashboard.Sessions.Verify(ctx, s.Token)
		if err != nil {
			t.Fatal(err)
		}
		setup, err := a.Dashboard.SecondFactor.BeginTOTP(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		code, _ := totp.Codes{}.TOTPCode(setup.Secret, time.Now().Unix()/30)
		if _, err := a.Dashboard.SecondFactor.ConfirmTOTP(ctx, u, code); err != nil {
			t.Fatal(err)
		}
	})
	env := func(k string) string { return map[string]string{"QUITA_ACCOUNT_PASSWORD": "senha-pelo-ambiente"}[k] }
	out, logs, err = accountPasswordRun(t, env, "--email", email, "--disable-totp", "--database-url", db)
	if err != nil {
		t.Fatalf("account password --disable-totp: %v (%s)", err, logs)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || !got.PasswordChanged || !got.TOTPDisabled || strings.Contains(out+logs, "senha-pelo") {
		t.Fatalf("output %q: %v", out, err)
	}
	withApp(t, db, func(a *wiring.App) {
		if _, err := a.Dashboard.Sessions.Login(ctx, email, "senha-pelo-ambiente", "192.0.2.1"); err != nil {
			t.Errorf("the password from the environment, without a code: %v", err)
		}
	})

	// --disable-totp alone keeps the password.
	if out, logs, err = accountPasswordRun(t, noEnv, "--email", email, "--disable-totp", "--database-url", db); err != nil {
		t.Fatalf("--disable-totp alone: %v (%s)", err, logs)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.PasswordChanged || !got.TOTPDisabled {
		t.Fatalf("output %q: %v", out, err)
	}
	// Refusals.
	for name, args := range map[string][]string{
		"no e-mail":     {"--database-url", db},
		"no password":   {"--email", email, "--database-url", db},
		"short":         {"--email", email, "--password", "curta", "--database-url", db},
		"unknown login": {"--email", "ninguem@loja.com.br", "--password", "uma-senha-longa", "--database-url", db},
	} {
		if _, _, err := accountPasswordRun(t, noEnv, args...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
