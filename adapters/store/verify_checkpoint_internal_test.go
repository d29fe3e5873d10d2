package store

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// writeEntry writes one balanced entry crediting account's live BRL
// wallet with amount, and the wallet, in idb.
func writeEntry(t *testing.T, idb bun.IDB, entry, account string, amount int64) {
	t.Helper()
	ctx := context.Background()
	now := newDBTime(time.Now())
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO ledger_entries (id, account_id, mode, charge_id, refund_id, payout_id, kind, created_at)
		  VALUES (?, ?, 'live', '', '', '', 'adjustment', ?)`, []any{entry, account, now}},
		{`INSERT INTO ledger_postings (entry_id, account_id, mode, currency, ledger_account, amount)
		  VALUES (?, ?, 'live', 'BRL', 'merchant_available', ?), (?, ?, 'live', 'BRL', 'acquirer_clearing', ?)`,
			[]any{entry, account, amount, entry, account, -amount}},
		{`INSERT INTO wallet_balances (account_id, mode, currency, available, pending, owed, updated_at)
		  VALUES (?, 'live', 'BRL', ?, 0, 0, ?)`, []any{account, amount, now}},
	} {
		if _, err := idb.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
}

// Posting ids are drawn in insert order and committed in any order: a
// verify that finds a posting committed above one still being written
// waits for that write before it takes its snapshot, so the checkpoint
// it saves never leaves the older posting behind (the next run would
// report its wallet as drift). A write open past the wait leaves the
// checkpoint where it was.
func TestLedgerVerifyWaitsForOpenLedgerWrites(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(step string, postings int64, saved bool) {
		t.Helper()
		r, err := db.CheckLedger(ctx, ports.LedgerCheckOptions{})
		if err != nil || len(r.Problems) > 0 || r.Postings != postings || r.Saved != saved {
			t.Fatalf("%s: %+v, %v; want %d postings read, saved %v", step, r, err, postings, saved)
		}
	}
	check("empty", 0, true)

	older, err := db.Bun().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = older.Rollback() })
	writeEntry(t, older, "entry_a", "acct_a", 5)
	writeEntry(t, db.Bun(), "entry_b", "acct_b", 3) // committed, its ids above older's
	done := make(chan error, 1)
	go func() {
		r, err := db.CheckLedger(ctx, ports.LedgerCheckOptions{})
		if err == nil && (len(r.Problems) > 0 || r.Postings != 4 || !r.Saved) {
			t.Errorf("run over the open write: %+v", r)
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the verify did not wait for the open ledger write (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := older.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	check("after the open write", 0, true)

	settleWait = 200 * time.Millisecond
	t.Cleanup(func() { settleWait = 30 * time.Second })
	open, err := db.Bun().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = open.Rollback() })
	writeEntry(t, open, "entry_c", "acct_c", 2)
	check("a write open past the wait", 0, false)
	if err := open.Commit(); err != nil {
		t.Fatal(err)
	}
	check("after it", 2, true)
}
