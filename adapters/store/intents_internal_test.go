package store

import (
	"context"
	"testing"
	"time"
)

// The cob intent's INSERT turns synchronous_commit off for its own
// transaction only (docs/decisions.md, "The cob intent is committed
// asynchronously"): inside a transaction the statement leaves it off, and
// the next transaction on the same connection is synchronous again.
func TestIntentInsertCommitsAsynchronouslyAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	conn, err := db.hot.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	setting := func() string {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, intentInsertAsync, "acct_async", "live", "key-async-0001", "txid", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	var inside string
	if err := tx.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&inside); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if inside != "off" {
		t.Errorf("synchronous_commit inside the intent's transaction = %q, want off", inside)
	}
	if after := setting(); after != "on" {
		t.Errorf("synchronous_commit after it = %q, want on (the setting must not leak to the connection)", after)
	}
}
