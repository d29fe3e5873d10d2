package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// An incremental ledger verify reads only what was written since its
// checkpoint — the postings, entries and events counted in its result
// are exactly the new ones — finds a discrepancy planted in a new entry
// and one in a wallet, and reports it again until it is gone; an update
// or delete of ledger rows makes the next run a full one; and a full run
// finds what was planted before the checkpoint, which an incremental run
// does not read again.
func TestLedgerVerifyIncremental(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, dsn(t))
			ctx := context.Background()
			db := e.srv.App.DB.Bun()
			acct := e.acct.AccountID
			check := func(full bool) ports.LedgerCheck {
				t.Helper()
				r, err := e.srv.App.Payments.CheckLedger(ctx, full)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			count := func(q string, args ...any) int64 {
				t.Helper()
				var n int64
				if err := db.NewRaw(q, args...).Scan(ctx, &n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return n
			}
			clean := func(step string, r ports.LedgerCheck, full bool) {
				t.Helper()
				if len(r.Problems) > 0 || r.Full != full || !r.Saved {
					t.Fatalf("%s: %+v, want full %v, no problem, saved", step, r, full)
				}
			}
			paid := e.create(10000, "BRL", "PIX")
			e.payPix(paid)
			e.want(e.call("POST", "/payments/"+paid+"/refund", e.acct.TestKey, map[string]any{"idempotencyKey": e.key(), "amount": 3000}), 201, "")
			e.advanceRefunds()

			r := check(false)
			clean("first run", r, true)
			if r.Reason != "no checkpoint yet" || r.Postings != count("SELECT count(*) FROM ledger_postings") {
				t.Fatalf("first run: %+v", r)
			}
			r = check(false)
			clean("nothing new", r, false)
			if r.Postings != 0 || r.Entries != 0 || r.Events != 0 || r.Charges != 0 {
				t.Fatalf("a run with nothing new read %+v", r)
			}

			// One charge created and paid: the run reads its postings,
			// entries and events, and checks it alone again.
			lastPosting, lastEvent := count("SELECT COALESCE(max(id), 0) FROM ledger_postings"), count("SELECT COALESCE(max(seq), 0) FROM charge_events")
			more := e.create(2500, "BRL", "PIX")
			e.payPix(more)
			r = check(false)
			clean("one more charge", r, false)
			if want := count("SELECT count(*) FROM ledger_postings WHERE id > ?", lastPosting); r.Postings != want || want == 0 {
				t.Errorf("postings read %d, written since %d", r.Postings, want)
			}
			if want := count("SELECT count(DISTINCT entry_id) FROM ledger_postings WHERE id > ?", lastPosting); r.Entries != want {
				t.Errorf("entries read %d, written since %d", r.Entries, want)
			}
			if want := count("SELECT count(*) FROM charge_events WHERE seq > ?", lastEvent); r.Events != want || want == 0 {
				t.Errorf("events read %d, written since %d", r.Events, want)
			}
			if r.Charges != 1 || r.Postings >= count("SELECT count(*) FROM ledger_postings") {
				t.Errorf("run after one charge: %+v", r)
			}

			// A new entry that does not balance and pays a charge twice.
			raw := strings.TrimPrefix(paid, "tx_")
			for _, q := range []string{
				`INSERT INTO ledger_entries (id, account_id, mode, charge_id, refund_id, payout_id, kind, created_at)
				 SELECT 'planted', account_id, mode, charge_id, '', '', kind, created_at FROM ledger_entries WHERE kind = 'payment' AND charge_id = '` + raw + `'`,
				`INSERT INTO ledger_postings (entry_id, account_id, mode, currency, ledger_account, amount)
				 SELECT 'planted', account_id, mode, 'BRL', 'acquirer_clearing', 7 FROM ledger_entries WHERE id = 'planted'`,
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, step := range []string{"planted entry", "planted entry again"} {
				r = check(false)
				all := strings.Join(r.Problems, "\n")
				if r.Full || r.Saved || !strings.Contains(all, "entry planted does not balance in BRL (7)") ||
					!strings.Contains(all, "charge "+raw+" (PAID) has 2 payment entries, want 1") {
					t.Fatalf("%s: %+v", step, r)
				}
			}
			// Taking it out deletes ledger rows: the next run reads all.
			for _, q := range []string{`DELETE FROM ledger_postings WHERE entry_id = 'planted'`, `DELETE FROM ledger_entries WHERE id = 'planted'`} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			r = check(false)
			clean("after a delete", r, true)
			if r.Reason != "ledger rows were updated or deleted since the checkpoint" {
				t.Fatalf("after a delete: %+v", r)
			}

			// A wallet that its postings do not give.
			for i, delta := range []int{5, -5} {
				if _, err := db.ExecContext(ctx, `UPDATE wallet_balances SET available = available + ? WHERE account_id = ?`, delta, acct); err != nil {
					t.Fatal(err)
				}
				r = check(false)
				if i == 1 {
					clean("wallet put back", r, false)
					continue
				}
				if r.Full || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "wallet "+acct+"/test/BRL: stored available") {
					t.Fatalf("wallet drift: %+v", r)
				}
			}

			// Before the checkpoint: a charge's amount changed with no event
			// and an entry that does not balance. An incremental run reads
			// neither again; a full one finds both, every time.
			if _, err := db.ExecContext(ctx, `UPDATE charges SET amount = amount + 1 WHERE id = ?`, raw); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO ledger_postings (entry_id, account_id, mode, currency, ledger_account, amount)
				SELECT id, account_id, mode, 'BRL', 'acquirer_clearing', 3 FROM ledger_entries WHERE kind = 'payment' AND charge_id = ?`, raw); err != nil {
				t.Fatal(err)
			}
			r = check(true)
			full := strings.Join(r.Problems, "\n")
			if !r.Full || !r.Saved || !strings.Contains(full, "charge_day_totals") || !strings.Contains(full, "does not balance in BRL (3)") {
				t.Fatalf("full run: %+v", r)
			}
			clean("incremental after the full run", check(false), false)
			if again := check(true); strings.Join(again.Problems, "\n") != full {
				t.Fatalf("second full run: %q, want %q", again.Problems, r.Problems)
			}
		})
	}
}
