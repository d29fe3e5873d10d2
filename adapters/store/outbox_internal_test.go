package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun/migrate"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// Upgrading a database whose outbox still holds one row per event
// (migration 20261127000003): every undispatched event moves into the
// statement-sized rows, in order, and is dispatched once.
func TestOutboxMigrationKeepsTheBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	migrateBefore(t, db, "20261127000003")
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var want []string
	for range 300 {
		c, evs, err := newPixCharge(ports.Scope{AccountID: "acct_upgrade", Mode: domain.ModeLive}, 1990, "", now)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateCharge(ctx, c, evs, nil); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			want = append(want, ev.ID)
		}
	}
	var old int
	// Today's code writes a create's two events as one row (migration
	// 20261128000002, applied early): one outbox row per event row.
	if err := db.bun.NewRaw("SELECT count(*) FROM event_outbox").Scan(ctx, &old); err != nil || old != 300 {
		t.Fatalf("before the upgrade the outbox holds %d rows (err %v), want one per event row", old, err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range []int{200, 100, 0} {
		d, err := db.DispatchEvents(ctx, 200, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
			for _, ev := range b.Events {
				got = append(got, ev.ID)
			}
			return nil, nil
		})
		if err != nil || d != n {
			t.Fatalf("dispatched %d (err %v), want %d", d, err, n)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("after the upgrade %d events were dispatched, want the %d written, once each and in order", len(got), len(want))
	}
}

// writtenColumns are migrations that only add nullable columns today's
// code writes on every create (answers_key, body_event, the twin_*
// columns, disputes and the wallets' owed, due_terms, overdue_at and
// overdue_notified, the subscription link, a split charge's splits, a
// sub-account's columns, a ledger entry's transfer and a sub-account's
// automatic payout): migrateBefore applies them
// too, so that the old schema's rows can be written with today's code;
// the later Migrate skips them as applied.
var writtenColumns = []string{"20261128000001", "20261128000002", "20261207000001", "20261207000030", "20261207000040",
	"20261215000002", "20261221000001", "20261221000002", "20261223000001", "20261223000002"}

// migrateBefore applies the dialect's migrations named before name (and
// writtenColumns).
func migrateBefore(t *testing.T, db *DB, name string) {
	t.Helper()
	ctx := context.Background()
	all, err := migrations(db.dialect)
	if err != nil {
		t.Fatal(err)
	}
	before := migrate.NewMigrations()
	for _, m := range all.Sorted() {
		if m.Name < name || slices.Contains(writtenColumns, m.Name) {
			before.Add(m)
		}
	}
	m := migrate.NewMigrator(db.bun, before, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

// Dropping the access log's key keeps its rows, on both dialects (SQLite
// rebuilds the table), and the upgraded table takes a request id twice.
func TestRequestLogsMigrationKeepsTheRows(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{testenv.PostgresDSN(t), "sqlite:" + filepath.Join(t.TempDir(), "q.db")} {
		ctx := context.Background()
		db, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		migrateBefore(t, db, "20261127000004")
		at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
		var entries []ports.RequestLogEntry
		for i := range 5 {
			entries = append(entries, ports.RequestLogEntry{RequestID: fmt.Sprintf("req_%d", i), AccountID: "acct_a", KeyFingerprint: "fp",
				Method: "POST", Path: "/v1/charges", Status: 201, Duration: time.Millisecond, CreatedAt: at.Add(time.Duration(i) * time.Second)})
		}
		if err := db.InsertRequestLogs(ctx, entries); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("%s: %v", db.dialect, err)
		}
		if err := db.InsertRequestLogs(ctx, entries[:1]); err != nil {
			t.Fatalf("%s: a request id again after the upgrade: %v", db.dialect, err)
		}
		got, err := db.ListRequestLogs(ctx, ports.RequestLogQuery{AccountID: "acct_a", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 6 || got[0].RequestID != "req_4" || got[5].RequestID != "req_0" || got[0].Duration != time.Millisecond {
			t.Errorf("%s: after the upgrade the log lists %+v, want the 5 rows kept and the sixth", db.dialect, got)
		}
	}
}

// Two dispatchers at once on Postgres: the second skips the outbox rows
// the first holds and takes the rest; every event is handed out once.
func TestConcurrentDispatchersNeverShareAnEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for range 10 { // 10 outbox rows of one entry of 2 events
		c, evs, err := newPixCharge(ports.Scope{AccountID: "acct_two", Mode: domain.ModeLive}, 1990, "", now)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateCharge(ctx, c, evs, nil); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	var mu sync.Mutex
	record := func(b ports.OutboxBatch) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range b.Events {
			seen[ev.ID]++
		}
	}
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := db.DispatchEvents(ctx, 3, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
			record(b)
			close(holding)
			<-release // its three rows stay locked meanwhile
			return nil, nil
		})
		first <- err
	}()
	<-holding
	n, err := db.DispatchEvents(ctx, 100, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
		record(b)
		return nil, nil
	})
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err != nil || n != 7 {
		t.Errorf("the second dispatcher took %d entries (err %v), want the 7 the first does not hold", n, err)
	}
	if n, err := db.DispatchEvents(ctx, 100, func(ports.OutboxBatch) ([]domain.WebhookDelivery, error) { return nil, nil }); err != nil || n != 0 {
		t.Errorf("after both, %d events were still undispatched (err %v)", n, err)
	}
	if len(seen) != 20 {
		t.Errorf("%d distinct events handed out, want 20", len(seen))
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("event %s handed out %d times", id, k)
		}
	}
}

// The upgrade that brought pix_returns takes over the returns charges owed
// before, on both dialects: one still requested is sent again (REQUESTED),
// one recorded done on the PSP's acceptance is asked about (IN_PROGRESS),
// a cancelled hold keeps its reason; a charge owing nothing, or with no
// end-to-end id to return, gets no row.
func TestReturnsMigrationTakesOverOwedReturns(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{testenv.PostgresDSN(t), "sqlite:" + filepath.Join(t.TempDir(), "q.db")} {
		ctx := context.Background()
		db, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		migrateBefore(t, db, "20261127000006")
		at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
		scope := ports.Scope{AccountID: "acct_returns", Mode: domain.ModeLive}
		type owed struct {
			status, returnState, e2e string
			amount                   int64
		}
		cases := map[string]owed{
			"requested": {"PROCESSING", "requested", "E00000000202611271200requested01", 990},
			"done":      {"PROCESSING", "done", "E00000000202611271200done0000001", 1990},
			"cancelled": {"CANCELLED", "requested", "E00000000202611271200cancelled01", 500},
			"nothing":   {"PAID", "", "E00000000202611271200nothing00001", 700},
			"no e2e":    {"PROCESSING", "requested", "", 800},
		}
		ids := map[string]string{}
		for name, o := range cases {
			c, evs, err := newPixCharge(scope, o.amount, name, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.CreateCharge(ctx, c, evs, nil); err != nil {
				t.Fatal(err)
			}
			ids[name] = c.ID()
			if _, err := db.bun.NewRaw(`UPDATE charges SET status = ?, return_state = ?, settlement_end_to_end_id = ?,
				settlement_amount = ? WHERE id = ?`, o.status, o.returnState, o.e2e, o.amount, c.ID()).Exec(ctx); err != nil {
				t.Fatalf("%s: %v", db.dialect, err)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("%s: %v", db.dialect, err)
		}
		var rows []struct {
			EndToEndID string `bun:"end_to_end_id"`
			ChargeID   string `bun:"charge_id"`
			Amount     int64  `bun:"amount"`
			Reason     string `bun:"reason"`
			Status     string `bun:"status"`
			Attempt    int    `bun:"attempt"`
			AccountID  string `bun:"account_id"`
			Mode       string `bun:"mode"`
		}
		if err := db.bun.NewRaw(`SELECT end_to_end_id, charge_id, amount, reason, status, attempt, account_id, mode
			FROM pix_returns ORDER BY end_to_end_id`).Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		want := map[string][3]string{ // e2e → charge case, reason, status
			cases["requested"].e2e: {"requested", "payer_mismatch", "REQUESTED"},
			cases["done"].e2e:      {"done", "payer_mismatch", "IN_PROGRESS"},
			cases["cancelled"].e2e: {"cancelled", "cancelled_hold", "REQUESTED"},
		}
		if len(rows) != len(want) {
			t.Fatalf("%s: %d returns after the upgrade (%+v), want %d", db.dialect, len(rows), rows, len(want))
		}
		for _, r := range rows {
			w, ok := want[r.EndToEndID]
			if !ok || r.ChargeID != ids[w[0]] || r.Reason != w[1] || r.Status != w[2] || r.Amount != cases[w[0]].amount ||
				r.Attempt != 1 || r.AccountID != scope.AccountID || r.Mode != string(scope.Mode) {
				t.Errorf("%s: return %+v, want charge %q %s %s of %d at attempt 1", db.dialect, r, w[0], w[1], w[2], cases[w[0]].amount)
			}
		}
	}
}

// The ascending-indexes upgrade rebuilds the list indexes that are still
// descending and leaves alone one an operator already swapped for its
// ascending form (CREATE INDEX CONCURRENTLY, then a rename).
func TestAscendingIndexesMigrationKeepsASwappedIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	migrateBefore(t, db, "20261127100002")
	// The operator's swap of one index, done ahead of the upgrade.
	for _, q := range []string{
		"CREATE INDEX charges_status_list_new ON charges (account_id, mode, status, created_at, id)",
		"DROP INDEX charges_status_list_idx",
		"ALTER INDEX charges_status_list_new RENAME TO charges_status_list_idx",
	} {
		if _, err := db.bun.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	oid := func(name string) (n int64) {
		if err := db.bun.NewRaw("SELECT ?::regclass::oid::bigint", name).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	swapped, scope := oid("charges_status_list_idx"), oid("charges_scope_created_idx")
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if oid("charges_status_list_idx") != swapped {
		t.Error("the upgrade rebuilt an index that was already ascending")
	}
	if oid("charges_scope_created_idx") == scope {
		t.Error("the upgrade left a descending index as it was")
	}
	var defs []string
	if err := db.bun.NewRaw(`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN
		('charges_scope_created_idx', 'charges_status_list_idx', 'charges_document_part_idx', 'charges_expected_payer_idx',
		 'request_logs_account_idx', 'request_logs_key_idx')`).Scan(ctx, &defs); err != nil {
		t.Fatal(err)
	}
	if len(defs) != 6 {
		t.Fatalf("%d list indexes after the upgrade, want 6: %q", len(defs), defs)
	}
	for _, d := range defs {
		if strings.Contains(d, "DESC") {
			t.Errorf("still descending: %s", d)
		}
	}
}
