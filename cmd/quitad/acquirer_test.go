package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
)

func TestAcquirerConfigureSealsAndRegistersWebhook(t *testing.T) {
	t.Parallel()
	const secret = "psp-client-secret-do-not-log"
	masterKey := strings.Repeat("5a", 32)
	sim := pixsim.New(pixsim.Config{ClientID: "quita", ClientSecret: secret})
	psp := httptest.NewServer(sim)
	t.Cleanup(psp.Close)

	dir := t.TempDir()
	path := filepath.Join(dir, "quita.db")
	junk := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(junk, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + path
	var out, errw bytes.Buffer
	if err := run(context.Background(), []string{"account", "create", "--name", "Loja", "--email", "psp@loja.com.br",
		"--password", "uma-senha-longa", "--database-url", db}, noEnv, &out, &errw); err != nil {
		t.Fatalf("account create: %v (%s)", err, errw.String())
	}
	var acct struct {
		AccountID string `json:"accountId"`
	}
	if err := json.Unmarshal(out.Bytes(), &acct); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"QUITA_MASTER_KEY": masterKey, "QUITA_PSP_CLIENT_SECRET": secret}[k]
	}
	base := []string{"acquirer", "configure", "--database-url", db, "--base-url", psp.URL, "--client-id", "quita",
		"--pix-key", "loja@example.com", "--webhook-url", "https://quita.example.com/v1/providers/bcbpix/" + acct.AccountID}

	tests := []struct {
		name    string
		args    []string
		getenv  func(string) string
		wantErr string
	}{
		{"no master key", append(base, "--account", acct.AccountID), func(k string) string {
			if k == "QUITA_PSP_CLIENT_SECRET" {
				return secret
			}
			return ""
		}, "QUITA_MASTER_KEY"},
		{"unknown account", append(base, "--account", "acct_nope"), env, "account"},
		{"no account", base, env, "--account"},
		{"key without certificate", append(base, "--account", acct.AccountID, "--key", junk), env, "certificate"},
		{"receiver account of no type", append(base, "--account", acct.AccountID, "--receiver-account", "123456",
			"--receiver-account-type", "OUTRA"), env, "receiver account type"},
		{"ok", append(base, "--account", acct.AccountID, "--receiver-branch", "0001", "--receiver-account", "123456"), env, ""},
	}
	for _, tc := range tests {
		var out, errw bytes.Buffer
		err := run(context.Background(), tc.args, tc.getenv, &out, &errw)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v (%s)", tc.name, err, errw.String())
		}
		if strings.Contains(out.String()+errw.String(), secret) || strings.Contains(out.String()+errw.String(), masterKey) {
			t.Errorf("%s: output or logs show a secret: %s %s", tc.name, out.String(), errw.String())
		}
		var got map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["account"] != acct.AccountID || got["provider"] != "bcbpix" ||
			got["pix_automatico"] != true {
			t.Errorf("%s: output %s", tc.name, out.String())
		}
	}
	// The PSP gets the URL with the account's secret callback token as
	// its last segment; the command never prints the token.
	hook := sim.Webhook("loja@example.com")
	token, ok := strings.CutPrefix(hook, "https://quita.example.com/v1/providers/bcbpix/"+acct.AccountID+"/")
	if !ok || len(token) < 43 || strings.Contains(token, "/") {
		t.Errorf("webhook at the PSP: %q, want the given URL + /<callback token>", hook)
	}
	if sim.WebhookRec() != hook || sim.WebhookCobR() != hook {
		t.Errorf("Pix Automático webhooks at the PSP: %q and %q, want %q", sim.WebhookRec(), sim.WebhookCobR(), hook)
	}
	// At rest the database holds only ciphertext.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if wal, err := os.ReadFile(path + "-wal"); err == nil {
		raw = append(raw, wal...)
	}
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("loja@example.com")) {
		t.Error("the database file holds the PSP configuration in clear")
	}
}
