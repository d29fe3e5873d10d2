package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/store"
)

func TestLedgerVerifyExitsNonZeroOnDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	var out bytes.Buffer
	if err := run(ctx, []string{"ledger", "verify", "-database-url", db}, noEnv, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("verify of an empty ledger: %v", err)
	}
	if !strings.Contains(out.String(), "ok") {
		t.Errorf("output %q", out.String())
	}
	// A balance no posting explains is drift.
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Bun().ExecContext(ctx, `INSERT INTO wallet_balances (account_id, mode, currency, available, pending, updated_at)
VALUES ('acct_x', 'live', 'BRL', 500, 0, '2026-11-22T00:00:00.000000Z')`)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err = run(ctx, []string{"ledger", "verify", "-database-url", db}, noEnv, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "DRIFT: wallet acct_x/live/BRL") {
		t.Fatalf("verify with drift: err %v, output %q", err, out.String())
	}
	if err := run(ctx, []string{"ledger"}, noEnv, &out, &bytes.Buffer{}); err == nil {
		t.Error("ledger without a subcommand succeeded")
	}
}

func TestFeesSetAndShow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	var out bytes.Buffer
	args := []string{"fees", "set", "--account", "acct_x", "--method", "PIX", "--provider", "10+1", "--platform", "0", "--database-url", db}
	if err := run(ctx, args, noEnv, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("fees set: %v", err)
	}
	if !strings.Contains(out.String(), `"PIX"`) || !strings.Contains(out.String(), `"bps": 10`) || !strings.Contains(out.String(), `"fixed": 1`) {
		t.Errorf("fees set output %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"fees", "show", "--account", "acct_x", "--database-url", db}, noEnv, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"bps": 299`) || !strings.Contains(out.String(), `"bps": 10`) {
		t.Errorf("fees show should merge the override with the defaults: %s", out.String())
	}
	for _, bad := range [][]string{
		{"fees"},
		{"fees", "set", "--account", "acct_x", "--method", "PAYPAL", "--provider", "1", "--platform", "1", "--database-url", db},
		{"fees", "set", "--account", "acct_x", "--method", "PIX", "--provider", "20000", "--platform", "1", "--database-url", db},
		// security.md, item 13: a fixed part near int64's range must not
		// wrap into a balanced-looking entry.
		{"fees", "set", "--account", "acct_x", "--method", "PIX", "--provider", "50+9223372036854775807", "--platform", "0", "--database-url", db},
		{"fees", "set", "--account", "acct_x", "--method", "PIX", "--provider", "0", "--platform", "0+100000001", "--database-url", db},
		{"fees", "show", "--database-url", db},
	} {
		if err := run(ctx, bad, noEnv, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%v succeeded", bad)
		}
	}
}
