package seed_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/internal/seed"
	"github.com/quitapix/quita/internal/testenv"
)

// TestSeedPassesLedgerVerifyAndServesLists seeds 20,000 charges and checks
// that the ledger verifies and that every list the API serves works on
// them: the big account holds half, its history spans the months.
func TestSeedPassesLedgerVerifyAndServesLists(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	const n = 20_000
	res, err := seed.Seed(ctx, seed.Options{DSN: dsn, Charges: n, Accounts: 20})
	if err != nil {
		t.Fatal(err)
	}
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

	a, cleanup, err := wiring.InitializeApp(ctx, wiring.Config{DatabaseURL: dsn, BaseURL: "http://seed.test/v1"},
		slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	problems, err := a.Payments.VerifyLedger(ctx)
	if err != nil || len(problems) > 0 {
		t.Fatalf("ledger verify: %v %v", err, problems)
	}
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()
	get := func(path string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1"+path, nil)
		req.Header.Set("apikey", res.TestKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return out
	}
	list := func(path string) []any {
		t.Helper()
		data, _ := get(path)["data"].([]any)
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
	stats := get("/payments/stats?days=365")
	if total, _ := stats["totalTransactions"].(float64); total < n/4 {
		t.Errorf("stats over a year count %v charges of the big account's %d", total, n/2)
	}
}
