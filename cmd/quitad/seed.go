package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
)

// demoFile keeps the demo account's keys beside an embedded database, so
// `make run` can show the test key again on every start. It is written only
// for SQLite files, with mode 0600: a convenience of the local default,
// never of a production database.
func demoFile(dsn string) string {
	path, ok := strings.CutPrefix(dsn, "sqlite:")
	if !ok || path == "" || strings.HasPrefix(path, ":memory:") {
		return ""
	}
	return filepath.Join(filepath.Dir(path), "quita-demo-keys.json")
}

// seedDemo creates a demo account on an empty database and prints how to
// make a first charge.
func seedDemo(ctx context.Context, a *wiring.App, cfg Config, stdout io.Writer) error {
	n, err := a.Accounts.CountAccounts(ctx)
	if err != nil {
		return err
	}
	file := demoFile(cfg.DatabaseURL)
	var demo app.NewAccount
	switch {
	case n == 0:
		demo, err = a.Accounts.CreateAccount(ctx, app.NewAccountInput{
			Name: "Loja Demo", Email: "demo@quita.test", Password: "demo-password-change-me", City: "SAO PAULO",
		})
		if err != nil {
			return fmt.Errorf("seed demo account: %w", err)
		}
		if file != "" {
			b, _ := json.MarshalIndent(demo, "", "  ")
			if err := os.WriteFile(file, b, 0o600); err != nil {
				return err
			}
		}
	case file != "":
		b, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil || json.Unmarshal(b, &demo) != nil {
			return nil
		}
	default:
		return nil
	}
	fmt.Fprintf(stdout, `
Quita is running at %[1]s (sandbox acquirer, nothing real moves).
Demo account %[2]s — dashboard login demo@quita.test / demo-password-change-me
Test API key: %[3]s

Create your first Pix charge:

  curl -s %[1]s/charges \
    -H 'apikey: %[3]s' \
    -H 'Idempotency-Key: first-charge-0001' \
    -H 'Content-Type: application/json' \
    -d '{"amount": 1990, "payment_method": "pix", "description": "Pedido 1001"}'

Then pay it in test mode:  curl -s -X POST %[1]s/test_helpers/charges/<ch_id>/pay -H 'apikey: %[3]s'
`, cfg.BaseURL, demo.AccountID, demo.TestKey)
	return nil
}
