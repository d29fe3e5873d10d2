package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

// demoEmail is the demo account's dashboard login.
const demoEmail = "demo@quita.test"

// shouldSeed decides whether serve creates the demo account (security.md,
// item 1). Unset, only the embedded SQLite database gets one: that is
// `make run` on a laptop, never a shared Postgres. QUITA_SEED_DEMO=true
// seeds any database, loudly; with the bcbpix acquirer (live keys move
// real money) seeding is refused outright, even when asked for.
func shouldSeed(cfg Config) (bool, error) {
	switch {
	case cfg.SeedDemo == seedOff:
		return false, nil
	case cfg.Acquirer == wiring.AcquirerBCBPix:
		if cfg.SeedDemo == seedOn {
			return false, errors.New("QUITA_SEED_DEMO=true is refused with QUITA_ACQUIRER=bcbpix: no demo account where live keys move real money")
		}
		return false, nil
	case cfg.SeedDemo == seedOn:
		return true, nil
	}
	return strings.HasPrefix(cfg.DatabaseURL, "sqlite:"), nil
}

// randomPassword is the demo account's password: 144 random bits,
// printed once and stored nowhere but as its hash.
func randomPassword() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// seedDemo creates a demo account on an empty database and prints how to
// make a first charge; the password is printed only then.
func seedDemo(ctx context.Context, a *wiring.App, cfg Config, stdout io.Writer, log *slog.Logger) error {
	n, err := a.Accounts.CountAccounts(ctx)
	if err != nil {
		return err
	}
	file := demoFile(cfg.DatabaseURL)
	var demo app.NewAccount
	login := demoEmail + " / (the password printed when the account was created)"
	switch {
	case n == 0:
		pw := randomPassword()
		demo, err = a.Accounts.CreateAccount(ctx, app.NewAccountInput{
			Name: "Loja Demo", Email: demoEmail, Password: pw, City: "SAO PAULO",
		})
		if err != nil {
			return fmt.Errorf("seed demo account: %w", err)
		}
		log.Warn("DEMO ACCOUNT CREATED: its keys and a random dashboard password are printed on stdout; "+
			"whoever reads that output can act as this merchant. Never seed a database that serves real merchants "+
			"(QUITA_SEED_DEMO=false turns this off).", "account", demo.AccountID, "email", demoEmail,
			"database", dialectOf(cfg.DatabaseURL))
		if file != "" {
			b, _ := json.MarshalIndent(demo, "", "  ")
			if err := os.WriteFile(file, b, 0o600); err != nil {
				return err
			}
		}
		login = demoEmail + " / " + pw + "   (printed only this once)"
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
Demo account %[2]s — dashboard login %[4]s
Test API key: %[3]s

Create your first Pix charge:

  curl -s %[1]s/charges \
    -H 'apikey: %[3]s' \
    -H 'Idempotency-Key: first-charge-0001' \
    -H 'Content-Type: application/json' \
    -d '{"amount": 1990, "payment_method": "pix", "description": "Pedido 1001"}'

Then pay it in test mode:  curl -s -X POST %[1]s/test_helpers/charges/<ch_id>/pay -H 'apikey: %[3]s'
`, cfg.BaseURL, demo.AccountID, demo.TestKey, login)
	return nil
}
