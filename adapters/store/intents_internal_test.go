package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

// The cob intent's INSERT turns synchronous_commit off for its own
// transaction only (docs/decisions.md, "The cob intent is committed
// asynchronously"): inside a transaction the statement leaves it off, and
// the next transaction on the same connection is synchronous again.
func TestIntentInsertCommitsAsynchronouslyAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, conn := migratedFastConn(t)
	setting := func() string {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	now := time.Now().UTC()
	for name, run := range map[string]func(pgx.Tx) error{
		"intentInsertAsync": func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, intentInsertAsync, "acct_async", "live", "key-async-0001", "txid", now)
			return err
		},
		"recordOrIntentsSQL": func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, recordOrIntentsSQL, []string{"acct_async", "acct_async"}, []string{"live", "live"},
				[]string{"key-async-0002", "key-async-0003"}, []string{"tx2", "tx3"}, []time.Time{now, now})
			return err
		},
	} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(tx); err != nil {
			t.Fatal(name, err)
		}
		var inside string
		if err := tx.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&inside); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if inside != "off" {
			t.Errorf("%s: synchronous_commit inside the intent's transaction = %q, want off", name, inside)
		}
		if after := setting(); after != "on" {
			t.Errorf("%s: synchronous_commit after it = %q, want on (the setting must not leak to the connection)", name, after)
		}
	}
}

// One batch of replay checks is one statement (recordOrIntentsSQL): each
// key gets its own answer whatever its place — a used key its record, a
// fresh key ErrNotFound with its intent recorded (a key twice in the batch
// records one intent, the first txid) — and a used key records no intent.
func TestRecordOrIntentsOneStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	scope := ports.Scope{AccountID: "acct_batch", Mode: domain.ModeLive}
	for _, k := range []string{"used-a", "used-b"} {
		row := &idempotencyRow{AccountID: scope.AccountID, Mode: string(scope.Mode), Key: k, Fingerprint: "fp-" + k,
			ResourceID: "chg_" + k, StatusCode: 201, Body: []byte(`{"id":"chg_` + k + `"}`), CreatedAt: newDBTime(now)}
		if _, err := db.bun.NewInsert().Model(row).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// used-c's answer is in its event (pointAnswer); used-d names an event
	// that is gone, which fails its own check only.
	ev := &eventRow{ID: "evt_answer_c", AccountID: scope.AccountID, Mode: string(scope.Mode), ChargeID: "chg_used-c",
		Type: string(domain.EventChargeCreated), Payload: []byte(`{"id":"evt_answer_c","data":{"object":{"id":"chg_used-c"}}}`), CreatedAt: newDBTime(now)}
	if _, err := db.bun.NewInsert().Model(ev).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for k, event := range map[string]string{"used-c": ev.ID, "used-d": "evt_gone"} {
		row := &idempotencyRow{AccountID: scope.AccountID, Mode: string(scope.Mode), Key: k, Fingerprint: "fp-" + k,
			ResourceID: "chg_" + k, StatusCode: 201, Body: []byte{}, BodyEvent: &event, CreatedAt: newDBTime(now)}
		if _, err := db.bun.NewInsert().Model(row).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"fresh-1", "used-a", "fresh-2", "used-d", "fresh-1", "used-b", "used-c", "fresh-3"}
	ins := make([]ports.ProviderIntent, len(keys))
	for i, k := range keys {
		ins[i] = ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: scope, Key: k}, TxID: fmt.Sprint("tx", i), CreatedAt: now}
	}
	results := make([]groupcommit.Result[*ports.IdempotencyRecord], len(keys))
	err := fastPool(db).Run(ctx, func(conn *pgx.Conn) error { return sendReplayChecks(ctx, conn, ins, results) })
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range results {
		k := keys[i]
		if k == "used-d" {
			if q.Err == nil || errors.Is(q.Err, ports.ErrNotFound) || q.Value != nil {
				t.Errorf("%s (place %d): %+v, %v; want an error: its answer is gone", k, i, q.Value, q.Err)
			}
			continue
		}
		if strings.HasPrefix(k, "used-") {
			if q.Err != nil || q.Value == nil || q.Value.ResourceID != "chg_"+k || q.Value.Fingerprint != "fp-"+k ||
				q.Value.Key != k || string(q.Value.Body) != `{"id":"chg_`+k+`"}` || !q.Value.CreatedAt.Equal(now) {
				t.Errorf("%s (place %d): %+v, %v; want its record", k, i, q.Value, q.Err)
			}
			continue
		}
		if !errors.Is(q.Err, ports.ErrNotFound) || q.Value != nil {
			t.Errorf("%s (place %d): %+v, %v; want ErrNotFound", k, i, q.Value, q.Err)
		}
	}
	got, err := db.ProviderIntentsBefore(ctx, now.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	txids := map[string]string{}
	for _, in := range got {
		txids[in.Key.Key] = in.TxID
	}
	if want := map[string]string{"fresh-1": "tx0", "fresh-2": "tx2", "fresh-3": "tx7"}; !maps.Equal(txids, want) {
		t.Errorf("intents %v, want %v", txids, want)
	}
}

// The cob intents are an unlogged table on Postgres (migration
// 20261127100001): their churn — a row, two index entries and a deletion
// per live create — writes no WAL.
func TestProviderIntentsAreUnlogged(t *testing.T) {
	t.Parallel()
	db := openMigratedPostgres(t)
	var persistence string
	if err := db.bun.NewRaw("SELECT relpersistence FROM pg_class WHERE oid = 'provider_intents'::regclass").
		Scan(context.Background(), &persistence); err != nil {
		t.Fatal(err)
	}
	if persistence != "u" {
		t.Errorf("provider_intents relpersistence = %q, want u (unlogged)", persistence)
	}
}
