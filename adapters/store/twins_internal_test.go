package store

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// eventsFromDomain pairs an event with the next one only when the row can
// hold both once: the same charge, scope and instant.
func TestEventsPairOnlyWithinOneChange(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ev := func(id, charge string, at time.Time) domain.Event {
		return domain.Event{ID: id, Type: domain.EventChargePaid, AccountID: "acct_a", Mode: domain.ModeLive, ChargeID: charge,
			CreatedAt: at, Payload: []byte(`{"id":"` + id + `"}`)}
	}
	otherMode := ev("evt_4", "ch_1", at)
	otherMode.Mode = domain.ModeTest
	cases := []struct {
		name string
		evs  []domain.Event
		rows []string // each row's ids, a twin after a "+"
	}{
		{"a pair", []domain.Event{ev("evt_1", "ch_1", at), ev("evt_2", "ch_1", at)}, []string{"evt_1+evt_2"}},
		{"three", []domain.Event{ev("evt_1", "ch_1", at), ev("evt_2", "ch_1", at), ev("evt_3", "ch_1", at)}, []string{"evt_1+evt_2", "evt_3"}},
		{"two charges", []domain.Event{ev("evt_1", "ch_1", at), ev("evt_2", "ch_2", at), ev("evt_3", "ch_2", at)}, []string{"evt_1", "evt_2+evt_3"}},
		{"two instants", []domain.Event{ev("evt_1", "ch_1", at), ev("evt_2", "ch_1", at.Add(time.Microsecond))}, []string{"evt_1", "evt_2"}},
		{"the same microsecond", []domain.Event{ev("evt_1", "ch_1", at), ev("evt_2", "ch_1", at.Add(time.Nanosecond))}, []string{"evt_1+evt_2"}},
		{"two modes", []domain.Event{ev("evt_1", "ch_1", at), otherMode}, []string{"evt_1", "evt_4"}},
		{"one", []domain.Event{ev("evt_1", "ch_1", at)}, []string{"evt_1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := eventsFromDomain(tc.evs)
			var got []string
			var back []domain.Event
			for i := range rows {
				id := rows[i].ID
				if rows[i].TwinID != nil {
					id += "+" + *rows[i].TwinID
				}
				got = append(got, id)
				back = rows[i].events(back)
			}
			if len(got) != len(tc.rows) {
				t.Fatalf("rows %v, want %v", got, tc.rows)
			}
			for i := range got {
				if got[i] != tc.rows[i] {
					t.Fatalf("rows %v, want %v", got, tc.rows)
				}
			}
			// Split again, every event is what it was, in order.
			if len(back) != len(tc.evs) {
				t.Fatalf("split into %d events, want %d", len(back), len(tc.evs))
			}
			for i, e := range back {
				w := tc.evs[i]
				if e.ID != w.ID || e.Type != w.Type || e.ChargeID != w.ChargeID || e.Mode != w.Mode || string(e.Payload) != string(w.Payload) {
					t.Errorf("event %d: %+v, want %+v", i, e, w)
				}
			}
		})
	}
}

// A create stores its two events as one row on Postgres (the bound batch)
// and SQLite: the second heap row and its four index entries are what
// this saves.
func TestACreateWritesOneEventRow(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{testenv.PostgresDSN(t), testenv.SQLiteDSN(t)} {
		ctx := context.Background()
		db, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		c, evs, err := newPixCharge(ports.Scope{AccountID: "acct_rows", Mode: domain.ModeLive}, 1990, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateCharge(ctx, c, evs, nil); err != nil {
			t.Fatal(err)
		}
		var rows, twins int
		if err := db.bun.NewRaw("SELECT count(*), count(twin_id) FROM charge_events").Scan(ctx, &rows, &twins); err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || rows != 1 || twins != 1 {
			t.Errorf("%s: %d events stored as %d rows with %d twins, want 2 as 1 with 1", db.dialect, len(evs), rows, twins)
		}
	}
}
