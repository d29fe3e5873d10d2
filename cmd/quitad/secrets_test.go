package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
)

// withStdin feeds s to the --*-stdin flags for the rest of the test. Tests
// that use it are not parallel: stdinReader is process-wide.
func withStdin(t *testing.T, s string) {
	old := stdinReader
	stdinReader = strings.NewReader(s)
	t.Cleanup(func() { stdinReader = old })
}

// loginWorks reports whether email/password log in on db.
func loginWorks(t *testing.T, db, email, password string) bool {
	t.Helper()
	cfg, err := parseConfig("quitad", []string{"-database-url", db}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	a, cleanup, err := openAdmin(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	_, err = a.Dashboard.Sessions.Login(context.Background(), email, password, "192.0.2.1")
	return err == nil
}

// security.md, item 18: the password need not be on the command line.
func TestAccountCreateTakesThePasswordFromStdinOrEnv(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	create := func(email string, getenv func(string) string, extra ...string) string {
		t.Helper()
		var out, errw bytes.Buffer
		args := append([]string{"account", "create", "--name", "Loja", "--email", email, "--database-url", db}, extra...)
		if err := run(context.Background(), args, getenv, &out, &errw); err != nil {
			t.Fatalf("account create %v: %v (%s)", extra, err, errw.String())
		}
		return errw.String()
	}

	withStdin(t, "senha-pela-entrada-padrao\nignored second line\n")
	if logs := create("stdin@loja.com.br", noEnv, "--password-stdin"); strings.Contains(logs, "senha-pela") {
		t.Error("the password reached the output")
	}
	if !loginWorks(t, db, "stdin@loja.com.br", "senha-pela-entrada-padrao") {
		t.Error("the password read from stdin does not log in")
	}

	env := func(k string) string {
		return map[string]string{"QUITA_ACCOUNT_PASSWORD": "senha-pelo-ambiente"}[k]
	}
	if logs := create("env@loja.com.br", env); strings.Contains(logs, "warning") {
		t.Errorf("env password warned: %s", logs)
	}
	if !loginWorks(t, db, "env@loja.com.br", "senha-pelo-ambiente") {
		t.Error("the password from QUITA_ACCOUNT_PASSWORD does not log in")
	}

	if logs := create("flag@loja.com.br", noEnv, "--password", "senha-pela-flag"); !strings.Contains(logs, "visible to other users") {
		t.Errorf("--password did not warn: %q", logs)
	}

	withStdin(t, "\n")
	var errw bytes.Buffer
	err := run(context.Background(), []string{"account", "create", "--name", "Loja", "--email", "empty@loja.com.br",
		"--database-url", db, "--password-stdin"}, noEnv, io.Discard, &errw)
	if err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty stdin: %v", err)
	}
}

// security.md, item 18: the PSP client secret can come from stdin; the PSP
// simulator accepts the webhook registration only with the right one.
func TestAcquirerConfigureReadsTheClientSecretFromStdin(t *testing.T) {
	const secret = "psp-client-secret-from-stdin"
	sim := pixsim.New(pixsim.Config{ClientID: "quita", ClientSecret: secret})
	psp := httptest.NewServer(sim)
	t.Cleanup(psp.Close)
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	acctEnv := func(k string) string { return map[string]string{"QUITA_ACCOUNT_PASSWORD": "uma-senha-longa"}[k] }
	var out bytes.Buffer
	if err := run(context.Background(), []string{"account", "create", "--name", "Loja", "--email", "psp@loja.com.br",
		"--database-url", db}, acctEnv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var acct struct {
		AccountID string `json:"accountId"`
	}
	if err := json.Unmarshal(out.Bytes(), &acct); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"QUITA_MASTER_KEY": strings.Repeat("5a", 32)}[k] }
	args := []string{"acquirer", "configure", "--database-url", db, "--base-url", psp.URL, "--client-id", "quita",
		"--pix-key", "loja@example.com", "--account", acct.AccountID, "--client-secret-stdin",
		"--webhook-url", "https://quita.example.com/v1/providers/bcbpix/" + acct.AccountID}
	withStdin(t, secret+"\r\n")
	var errw bytes.Buffer
	out.Reset()
	if err := run(context.Background(), args, env, &out, &errw); err != nil {
		t.Fatalf("configure: %v (%s)", err, errw.String())
	}
	if strings.Contains(out.String()+errw.String(), secret) {
		t.Error("the secret reached the output")
	}
	if hook := sim.Webhook("loja@example.com"); hook == "" {
		t.Error("the webhook was not registered with the secret from stdin")
	}
	withStdin(t, secret+"\n")
	if err := run(context.Background(), append(args, "--client-secret", "x"), env, io.Discard, io.Discard); err == nil {
		t.Error("--client-secret with --client-secret-stdin was accepted")
	}
}
