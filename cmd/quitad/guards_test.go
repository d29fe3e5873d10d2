package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestAccountGuardsChangesOnlyTheGivenSettings(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	var out bytes.Buffer
	err := run(context.Background(), []string{"account", "create", "--name", "Loja", "--email", "guards@loja.com.br",
		"--password", "uma-senha-longa", "--database-url", db}, noEnv, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var acct struct{ AccountID string }
	if err := json.Unmarshal(out.Bytes(), &acct); err != nil {
		t.Fatal(err)
	}
	guards := func(args ...string) (guardSettingsJSON, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"account", "guards", "--account", acct.AccountID, "--database-url", db}, args...),
			noEnv, &out, &bytes.Buffer{})
		var s guardSettingsJSON
		if err == nil {
			err = json.Unmarshal(out.Bytes(), &s)
		}
		return s, err
	}
	if s, err := guards(); err != nil || s != (guardSettingsJSON{100, 200, 20, 10_000_000, "default", true, false}) {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	if s, err := guards("--rate", "5", "--amount-limit", "1000", "--block", "529.982.247-25"); err != nil || s != (guardSettingsJSON{5, 200, 20, 1000, "default", true, false}) {
		t.Fatalf("after change: %+v %v", s, err)
	}
	if s, err := guards("--velocity", "3"); err != nil || s != (guardSettingsJSON{5, 200, 3, 1000, "default", true, false}) {
		t.Fatalf("other flags kept: %+v %v", s, err)
	}
	if s, err := guards("--rate", "0"); err != nil || s.RateLimitPerSecond != 100 {
		t.Fatalf("back to the default: %+v %v", s, err)
	}
	// The cashout restriction: on in both modes, off in both, back to
	// the default (live on, test off); other settings kept.
	if s, err := guards("--cashout-payer-only"); err != nil || s != (guardSettingsJSON{100, 200, 3, 1000, "true", true, true}) {
		t.Fatalf("cashout restriction on: %+v %v", s, err)
	}
	if s, err := guards("--cashout-payer-only=false", "--velocity", "4"); err != nil || s != (guardSettingsJSON{100, 200, 4, 1000, "false", false, false}) {
		t.Fatalf("cashout restriction off: %+v %v", s, err)
	}
	if s, err := guards("--velocity", "5"); err != nil || s.CashoutPayerOnly != "false" {
		t.Fatalf("cashout restriction kept: %+v %v", s, err)
	}
	if s, err := guards("--cashout-payer-only=default"); err != nil || s != (guardSettingsJSON{100, 200, 5, 1000, "default", true, false}) {
		t.Fatalf("cashout restriction by default: %+v %v", s, err)
	}
	if _, err := guards("--cashout-payer-only=maybe"); err == nil {
		t.Error("--cashout-payer-only=maybe accepted")
	}
	err = run(context.Background(), []string{"account", "guards", "--account", "acct_missing", "--database-url", db}, noEnv, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "acct_missing") {
		t.Errorf("unknown account: %v", err)
	}
}
