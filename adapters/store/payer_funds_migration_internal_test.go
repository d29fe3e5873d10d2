package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// Upgrading a database that holds payers' money from before payer_funds
// (a charge held for review, returns not yet confirmed) posts it, so the
// ledger's per-charge check agrees from the first verify; a charge that
// holds nothing (paid, or its return confirmed) gets no entry.
func TestPayerFundsBackfill(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{testenv.PostgresDSN(t), "sqlite:" + filepath.Join(t.TempDir(), "q.db")} {
		ctx := context.Background()
		db, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		migrateBefore(t, db, "20261207000003")
		at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		scope := ports.Scope{AccountID: "acct_backfill", Mode: domain.ModeLive}
		cases := []struct {
			name, status, returnState, e2e string
			amount                         int64
			returned                       string // the pix_returns row's status, "" for none
		}{
			{"held", "PROCESSING", "", "E00000000202612011200held00000001", 990, ""},
			{"mismatch", "PROCESSING", "requested", "E00000000202612011200mismatch0001", 1990, "IN_PROGRESS"},
			{"returned", "REFUNDED", "done", "E00000000202612011200returned0001", 500, "RETURNED"},
		}
		ids := map[string]string{}
		for _, tc := range cases {
			c, evs, err := newPixCharge(scope, tc.amount, tc.name, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.CreateCharge(ctx, c, evs, nil); err != nil {
				t.Fatal(err)
			}
			ids[tc.name] = c.ID()
			if _, err := db.bun.NewRaw(`UPDATE charges SET status = ?, return_state = ?, settlement_end_to_end_id = ?,
				settlement_amount = ? WHERE id = ?`, tc.status, tc.returnState, tc.e2e, tc.amount, c.ID()).Exec(ctx); err != nil {
				t.Fatalf("%s: %v", db.dialect, err)
			}
			if tc.returned != "" {
				if _, err := db.bun.NewRaw(`INSERT INTO pix_returns (end_to_end_id, account_id, mode, charge_id, amount, reason, status,
					attempt, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'payer_mismatch', ?, 1, ?, ?)`,
					tc.e2e, scope.AccountID, string(scope.Mode), c.ID(), tc.amount, tc.returned, newDBTime(at), newDBTime(at)).Exec(ctx); err != nil {
					t.Fatalf("%s: %v", db.dialect, err)
				}
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("%s: %v", db.dialect, err)
		}
		var funds []struct {
			ChargeID string `bun:"charge_id"`
			Sum      int64  `bun:"total"`
		}
		if err := db.bun.NewRaw(`SELECT le.charge_id, SUM(lp.amount) AS total FROM ledger_postings AS lp
			JOIN ledger_entries AS le ON le.id = lp.entry_id WHERE lp.ledger_account = 'payer_funds' GROUP BY le.charge_id`).Scan(ctx, &funds); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, f := range funds {
			got[f.ChargeID] = f.Sum
		}
		if got[ids["held"]] != 990 || got[ids["mismatch"]] != 1990 || got[ids["returned"]] != 0 || len(got) != 2 {
			t.Errorf("%s: payer funds after the upgrade %v, want held 990 and mismatch 1990 only", db.dialect, got)
		}
		problems, err := db.VerifyDerived(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			if strings.Contains(p, "payer funds") || strings.Contains(p, "payment entries") {
				t.Errorf("%s: %s", db.dialect, p)
			}
		}
	}
}
