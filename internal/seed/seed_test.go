package seed_test

import (
	"context"
	"testing"

	"github.com/quitapix/quita/internal/seed"
)

// TestSeedPassesLedgerVerifyAndServesLists seeds 20,000 charges and checks
// that the ledger verifies and that every list the API serves works on
// them: the big account holds half, its history spans the months.
func TestSeedPassesLedgerVerifyAndServesLists(t *testing.T) {
	const n = 20_000
	s := seedAndServe(t, seed.Options{Charges: n, Accounts: 20})
	res := s.res
	if res.Rows["charges"] != n {
		t.Fatalf("charges copied = %d, want %d", res.Rows["charges"], n)
	}
	for _, table := range []string{"charge_events", "webhook_deliveries", "refunds", "payouts", "ledger_entries", "ledger_postings", "request_logs", "accounts"} {
		if res.Rows[table] == 0 {
			t.Errorf("no %s rows seeded", table)
		}
	}
	if r := float64(res.Rows["refunds"]) / n; r < 0.08 || r > 0.12 {
		t.Errorf("refunds per charge = %.3f, want about 0.10", r)
	}
	var unplaced int
	if err := s.app.DB.Bun().NewRaw("SELECT (SELECT count(*) FROM charge_events_default) + (SELECT count(*) FROM request_logs_default)").
		Scan(context.Background(), &unplaced); err != nil || unplaced != 0 {
		t.Errorf("%d seeded rows in the default partitions (err %v), want each in its month", unplaced, err)
	}
	problems, err := s.app.Payments.VerifyLedger(context.Background())
	if err != nil || len(problems) > 0 {
		t.Fatalf("ledger verify: %v %v", err, problems)
	}
	// The full run saved a checkpoint: the next reads nothing of the seed.
	if r, err := s.app.Payments.CheckLedger(context.Background(), false); err != nil || r.Full || len(r.Problems) > 0 ||
		r.Postings != 0 || r.Charges != 0 || !r.Saved {
		t.Fatalf("incremental ledger verify after the full one: %+v, %v", r, err)
	}
	list := func(path string) []any {
		t.Helper()
		data, _ := s.get(t, path)["data"].([]any)
		if len(data) == 0 {
			t.Fatalf("GET %s: empty list", path)
		}
		return data
	}
	page := list("/charges?limit=100")
	last := page[len(page)-1].(map[string]any)["id"].(string)
	list("/charges?limit=100&starting_after=" + last)
	list("/charges?status=paid&limit=10&created_after=2000-01-01T00:00:00Z")
	list("/events?limit=10")
	list("/webhooks/deliveries?limit=10")
	list("/payouts?limit=10")
	list("/payments?limit=10&status=PAID")
	stats := s.get(t, "/payments/stats?days=365")
	// The window starts at a UTC midnight 364 days back, so it holds a
	// little less than half of the big account's two even years (n/4).
	if total, _ := stats["totalTransactions"].(float64); total < n/5 {
		t.Errorf("stats over a year count %v charges of the big account's %d", total, n/2)
	}
}
