package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
)

// Issue 12 item 4: ledger verify cross-checks the charge counters, the
// per-day totals and every refund's ledger entries against the charges and
// refunds, and names the account of each drift. Each kind of drift is
// planted in one account; the other account stays clean.
func TestLedgerVerifyFindsPlantedDrift(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, dsn(t))
			clean := e.srv.NewAccount(t, "Loja Limpa")
			id := e.create(10000, "BRL", "PIX")
			e.payPix(id)
			e.want(e.call("POST", "/payments/"+id+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 3000}), 201, "")
			e.advanceRefunds()
			other := e.call("POST", "/payments", clean.TestKey, map[string]any{"amount": 500, "currency": "BRL",
				"paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()})
			e.want(other, 201, "")
			e.verifyLedger()

			db := e.srv.App.DB.Bun()
			ctx := context.Background()
			acct := e.acct.AccountID
			// The counters are corrupted where the fold put them.
			if _, err := e.srv.App.DB.FoldChargeStats(ctx); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`UPDATE charge_counts SET n = n + 1 WHERE account_id = ? AND shard = (SELECT min(shard) FROM charge_counts WHERE account_id = ?)`,
				`UPDATE charge_day_totals SET volume = volume + 7 WHERE account_id = ? AND shard = (SELECT min(shard) FROM charge_day_totals WHERE account_id = ?)`,
				`UPDATE ledger_entries SET kind = 'refund_failed' WHERE kind = 'refund_settled' AND account_id = ? AND account_id = ?`,
			} {
				if _, err := db.ExecContext(ctx, q, acct, acct); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			problems, err := e.srv.App.Payments.VerifyLedger(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(problems, "\n")
			for _, want := range []string{"charge_counts", "charge_day_totals", "refund_settled entries", "refund_failed entries"} {
				if !strings.Contains(all, want) {
					t.Errorf("no %q drift reported:\n%s", want, all)
				}
			}
			for _, p := range problems {
				if !strings.Contains(p, acct) || strings.Contains(p, clean.AccountID) {
					t.Errorf("problem not naming the drifted account alone: %s", p)
				}
			}
		})
	}
}
