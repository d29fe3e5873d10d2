package store

import (
	"context"
	"slices"
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
	all, err := migrations(db.dialect)
	if err != nil {
		t.Fatal(err)
	}
	before := migrate.NewMigrations()
	for _, m := range all.Sorted() {
		if m.Name < "20261127000003" {
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
	if err := db.bun.NewRaw("SELECT count(*) FROM event_outbox").Scan(ctx, &old); err != nil || old != 600 {
		t.Fatalf("before the upgrade the outbox holds %d rows (err %v), want one per event", old, err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range []int{500, 100, 0} {
		d, err := db.DispatchEvents(ctx, 500, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
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
