package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
)

// Ledger verify cross-checks the charge counters, the
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

// Ledger verify sees money the ledger must post for a charge: a dispute
// recorded without its debit, a payment credited twice, payer funds not
// posted for a held charge, and a wallet's debt that its postings do not
// give. Each is planted in one account; the other stays clean.
func TestLedgerVerifyFindsUnpostedChargeMoney(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, dsn(t))
			clean := e.srv.NewAccount(t, "Loja Limpa")
			disputed, twice, held := e.create(10000, "BRL", "PIX"), e.create(10000, "BRL", "PIX"), e.create(500, "BRL", "PIX")
			e.payPix(disputed)
			e.payPix(twice)
			e.want(e.call("POST", "/test_helpers/charges/ch_"+strings.TrimPrefix(disputed, "tx_")+"/med_return", e.acct.TestKey,
				map[string]any{"reason": "fraud", "amount": 10001}), 400, "dispute_exceeds_amount")
			e.want(e.call("POST", "/test_helpers/charges/ch_"+strings.TrimPrefix(disputed, "tx_")+"/med_return", e.acct.TestKey,
				map[string]any{"reason": "fraud"}), 200, "")
			other := e.call("POST", "/payments", clean.TestKey, map[string]any{"amount": 500, "currency": "BRL",
				"paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()})
			e.want(other, 201, "")
			e.want(e.call("POST", "/test_helpers/charges/"+other.str("id")+"/pay", clean.TestKey, map[string]any{}), 200, "")
			e.verifyLedger()

			db := e.srv.App.DB.Bun()
			ctx := context.Background()
			acct := e.acct.AccountID
			raw := func(id string) string { return strings.TrimPrefix(id, "tx_") }
			for _, q := range []struct {
				sql  string
				args []any
			}{
				// The dispute's debit is gone, and the wallet with it.
				{`DELETE FROM ledger_postings WHERE entry_id IN (SELECT id FROM ledger_entries WHERE kind = 'dispute' AND charge_id = ?)`, []any{raw(disputed)}},
				{`DELETE FROM ledger_entries WHERE kind = 'dispute' AND charge_id = ?`, []any{raw(disputed)}},
				// A second payment entry for one charge.
				{`UPDATE ledger_entries SET charge_id = ? WHERE kind = 'payment' AND charge_id = ?`, []any{raw(twice), raw(disputed)}},
				// A held charge with no payer funds posted.
				{`UPDATE charges SET status = 'PROCESSING', settlement_amount = 500, settlement_end_to_end_id = 'E99999999202612071200heldheldheld' WHERE id = ?`, []any{raw(held)}},
				// A debt the postings do not give.
				{`UPDATE wallet_balances SET owed = owed + 5 WHERE account_id = ?`, []any{acct}},
			} {
				if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
					t.Fatalf("%s: %v", q.sql, err)
				}
			}
			problems, err := e.srv.App.Payments.VerifyLedger(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(problems, "\n")
			for _, want := range []string{
				"has 0 dispute entries of 0, want 1 of 10000",
				"has 2 payment entries, want 1",
				"has 0 payment entries, want 1",
				"holds 0 of payer funds, want 500 held for review",
				"owed 5, postings give",
			} {
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
