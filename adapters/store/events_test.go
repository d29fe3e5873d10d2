package store_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// seedEvents creates n charges of scope a minute apart, each with its two
// creation events, and returns the events in write order.
func seedEvents(t *testing.T, db *store.DB, scope ports.Scope, n int) []domain.Event {
	t.Helper()
	var all []domain.Event
	for i := range n {
		at := baseTime.Add(time.Duration(i) * time.Minute)
		c := newCharge(t, scope, at, nil)
		evs := chargeEvents(t, c, "", domain.CreationEvents(), at)
		mustCreate(t, db, c, evs, nil)
		all = append(all, evs...)
	}
	return all
}

func eventIDs(evs []domain.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func testListEvents(t *testing.T, db *store.DB) {
	ctx := t.Context()
	written := seedEvents(t, db, testA, 3) // 6 events
	other := seedEvents(t, db, liveB, 1)
	seedEvents(t, db, liveA, 1) // same account, other mode
	newestFirst := slices.Clone(written)
	slices.Reverse(newestFirst)

	// Older pages with starting_after walk every event once, newest first.
	var got []domain.Event
	q := ports.EventQuery{Scope: testA, Limit: 4}
	for pages := 0; ; pages++ {
		page, more, err := listEvents(ctx, db, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if !more {
			break
		}
		if pages > 3 {
			t.Fatal("pagination does not end")
		}
		q.StartingAfter = page[len(page)-1].ID
	}
	if !slices.Equal(eventIDs(got), eventIDs(newestFirst)) {
		t.Fatalf("pages %v, want %v", eventIDs(got), eventIDs(newestFirst))
	}
	if !bytes.Equal(got[0].Payload, newestFirst[0].Payload) || got[0].Type != newestFirst[0].Type || got[0].Mode != domain.ModeTest {
		t.Errorf("event did not round-trip: %+v", got[0])
	}

	// ending_before: the events just after the cursor, newest first; more
	// says newer ones remain.
	page, more, err := listEvents(ctx, db, ports.EventQuery{Scope: testA, Limit: 2, EndingBefore: written[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{written[2].ID, written[1].ID}; !slices.Equal(eventIDs(page), want) || !more {
		t.Errorf("ending_before page %v more=%v, want %v more=true", eventIDs(page), more, want)
	}
	page, more, err = listEvents(ctx, db, ports.EventQuery{Scope: testA, Limit: 10, EndingBefore: written[5].ID})
	if err != nil || len(page) != 0 || more {
		t.Errorf("nothing after the newest: %v more=%v err=%v", eventIDs(page), more, err)
	}

	// Filters: type and an inclusive created range.
	page, _, err = listEvents(ctx, db, ports.EventQuery{Scope: testA, Limit: 10, Types: []domain.EventType{domain.EventChargeCreated}})
	if err != nil || len(page) != 3 {
		t.Fatalf("type filter: %d events, err %v", len(page), err)
	}
	for _, e := range page {
		if e.Type != domain.EventChargeCreated {
			t.Errorf("type filter let %s through", e.Type)
		}
	}
	from, to := micro(written[2].CreatedAt), micro(written[3].CreatedAt) // both of the second charge
	page, _, err = listEvents(ctx, db, ports.EventQuery{Scope: testA, Limit: 10, CreatedAfter: &from, CreatedBefore: &to})
	if want := []string{written[3].ID, written[2].ID}; err != nil || !slices.Equal(eventIDs(page), want) {
		t.Errorf("created range: %v, want %v (err %v)", eventIDs(page), want, err)
	}

	// Isolation: another scope's event is neither a cursor nor readable,
	// whether it is its row's first event or its twin.
	for _, ev := range other {
		for _, q := range []ports.EventQuery{
			{Scope: testA, Limit: 5, StartingAfter: ev.ID},
			{Scope: testA, Limit: 5, EndingBefore: ev.ID},
		} {
			if _, _, err := listEvents(ctx, db, q); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("cursor %s of another account: %v, want ErrNotFound", ev.Type, err)
			}
		}
		if _, err := db.GetEvent(ctx, testA, ev.ID); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("GetEvent of another account's %s: %v, want ErrNotFound", ev.Type, err)
		}
	}
	for _, ev := range written[:2] {
		if _, err := db.GetEvent(ctx, liveA, ev.ID); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("GetEvent of a %s in the other mode: %v, want ErrNotFound", ev.Type, err)
		}
	}
	ev, err := db.GetEvent(ctx, testA, written[1].ID)
	if err != nil || !bytes.Equal(ev.Payload, written[1].Payload) || ev.ChargeID != written[1].ChargeID {
		t.Errorf("GetEvent: %+v, %v", ev, err)
	}
}

func testDeleteEventsBefore(t *testing.T, db *store.DB) {
	ctx := t.Context()
	written := seedEvents(t, db, testA, 3)
	cut := written[4].CreatedAt // the third charge's events stay
	// Undispatched events are never deleted, however old.
	if n, err := db.DeleteEventsBefore(ctx, cut, 100); err != nil || n != 0 {
		t.Fatalf("deleted %d undispatched events (err %v)", n, err)
	}
	if _, err := db.DispatchEvents(ctx, 100, func(ports.OutboxBatch) ([]domain.WebhookDelivery, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	// A create's two events are stored together and go together: a limit
	// of 3 takes one create's 2, a limit of 1 still takes 2.
	if n, err := db.DeleteEventsBefore(ctx, cut, 3); err != nil || n != 2 {
		t.Fatalf("first batch deleted %d (err %v), want 2 (the limit 3 would split a pair)", n, err)
	}
	if n, err := db.DeleteEventsBefore(ctx, cut, 1); err != nil || n != 2 {
		t.Fatalf("second batch deleted %d (err %v), want the pair of 2", n, err)
	}
	if n, err := db.DeleteEventsBefore(ctx, cut, 100); err != nil || n != 0 {
		t.Fatalf("third batch deleted %d (err %v), want 0", n, err)
	}
	page, _, err := listEvents(ctx, db, ports.EventQuery{Scope: testA, Limit: 10})
	if want := []string{written[5].ID, written[4].ID}; err != nil || !slices.Equal(eventIDs(page), want) {
		t.Errorf("left %v, want %v (err %v)", eventIDs(page), want, err)
	}
}

// Two events of one change share a row (its twin), and every read shows
// them apart, in write order: pages of any size, split inside a row or
// not, walked older or newer from either half, with a type filter that
// matches only the first halves or only the twins.
func testListEventsAcrossPairs(t *testing.T, db *store.DB) {
	ctx := t.Context()
	written := seedEvents(t, db, testA, 2) // two rows of two
	c := newCharge(t, testA, baseTime.Add(time.Hour), nil)
	five := chargeEvents(t, c, "", []domain.EventType{domain.EventChargeCreated, domain.EventPaymentCreated,
		domain.EventChargePaid, domain.EventPaymentCompleted, domain.EventChargeRefunded}, baseTime.Add(time.Hour))
	mustCreate(t, db, c, five, nil) // two rows of two and one alone
	written = append(written, five...)
	oldestFirst := eventIDs(written)
	newestFirst := slices.Clone(oldestFirst)
	slices.Reverse(newestFirst)

	// walk pages from q on, older (StartingAfter) or newer (EndingBefore),
	// and returns the ids in the order walked.
	walk := func(q ports.EventQuery, newer bool) []string {
		t.Helper()
		var got []string
		for range len(written) + 1 {
			page, more, err := listEvents(ctx, db, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > q.Limit {
				t.Fatalf("limit %d: a page of %d", q.Limit, len(page))
			}
			ids := eventIDs(page)
			if newer {
				slices.Reverse(ids) // each page is newest first
			}
			if len(ids) > 0 && newer {
				q.EndingBefore = ids[len(ids)-1]
			} else if len(ids) > 0 {
				q.StartingAfter = ids[len(ids)-1]
			}
			got = append(got, ids...)
			if !more {
				return got
			}
		}
		t.Fatalf("limit %d: pagination does not end", q.Limit)
		return nil
	}
	walkOlder := func(q ports.EventQuery) []string { return walk(q, false) }
	walkNewer := func(q ports.EventQuery) []string { return walk(q, true) }
	for _, limit := range []int{1, 2, 3, 5, 100} {
		if got := walkOlder(ports.EventQuery{Scope: testA, Limit: limit}); !slices.Equal(got, newestFirst) {
			t.Errorf("limit %d, older: %v\nwant %v", limit, got, newestFirst)
		}
		// From the oldest event, newer: every event after it.
		if got := walkNewer(ports.EventQuery{Scope: testA, Limit: limit, EndingBefore: oldestFirst[0]}); !slices.Equal(got, oldestFirst[1:]) {
			t.Errorf("limit %d, newer: %v\nwant %v", limit, got, oldestFirst[1:])
		}
	}
	// From each event, one page each way: the cursor is a first half or
	// a twin in turn.
	for i, id := range oldestFirst {
		older, _, err := listEvents(ctx, db, ports.EventQuery{Scope: testA, Limit: 1, StartingAfter: id})
		if want := oldestFirst[max(i-1, 0):i]; err != nil || !slices.Equal(eventIDs(older), want) {
			t.Errorf("after %s (%d): %v, want %v (err %v)", id, i, eventIDs(older), want, err)
		}
		newer, _, err := listEvents(ctx, db, ports.EventQuery{Scope: testA, Limit: 1, EndingBefore: id})
		if want := oldestFirst[i+1 : min(i+2, len(oldestFirst))]; err != nil || !slices.Equal(eventIDs(newer), want) {
			t.Errorf("before %s (%d): %v, want %v (err %v)", id, i, eventIDs(newer), want, err)
		}
	}
	// A filter on a type that only twins have, and one only first halves
	// have, paged one event at a time.
	for _, typ := range []domain.EventType{domain.EventPaymentCreated, domain.EventChargeCreated, domain.EventChargeRefunded} {
		var want []string
		for _, e := range slices.Backward(written) {
			if e.Type == typ {
				want = append(want, e.ID)
			}
		}
		if got := walkOlder(ports.EventQuery{Scope: testA, Limit: 1, Types: []domain.EventType{typ}}); !slices.Equal(got, want) {
			t.Errorf("type %s: %v, want %v", typ, got, want)
		}
	}
	// Each event is found by its id, with its own type and payload.
	for _, e := range written {
		got, err := db.GetEvent(ctx, testA, e.ID)
		if err != nil || got.Type != e.Type || !bytes.Equal(got.Payload, e.Payload) || got.ChargeID != e.ChargeID {
			t.Errorf("GetEvent %s (%s): %+v, %v", e.ID, e.Type, got, err)
		}
	}
	assertEvents(t, db, testA, c.ID(), five)
}

// listEvents is ListEvents as the events, then whether more follow.
func listEvents(ctx context.Context, db *store.DB, q ports.EventQuery) ([]domain.Event, bool, error) {
	p, err := db.ListEvents(ctx, q)
	return p.Events, p.More, err
}

// A filtered page examines a bounded number of rows: when the filter
// leaves it short, it ends with more and a cursor past the last row
// examined, and following the cursors walks every match once, in order,
// older and newer.
func testEventScanIsBounded(t *testing.T, db *store.DB) {
	ctx := t.Context()
	db.SetEventScan(4)                     // rows, of two events each
	written := seedEvents(t, db, testA, 9) // 18 events: created/payment.created pairs
	var created []string
	for _, e := range written {
		if e.Type == domain.EventChargeCreated {
			created = append(created, e.ID)
		}
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)
	never := ports.EventQuery{Scope: testA, Limit: 10, Types: []domain.EventType{domain.EventChargeRefunded}}
	p, err := db.ListEvents(ctx, never)
	if err != nil || len(p.Events) != 0 || !p.More || p.Next == "" {
		t.Fatalf("a filter matching nothing: %v more=%v next=%q err=%v; want an empty page with a cursor", eventIDs(p.Events), p.More, p.Next, err)
	}
	pages := 0
	for q := never; ; pages++ {
		p, err := db.ListEvents(ctx, q)
		if err != nil || len(p.Events) != 0 {
			t.Fatalf("page %d: %v %v", pages, eventIDs(p.Events), err)
		}
		if !p.More {
			break
		}
		if pages > 5 {
			t.Fatal("the cursors never end")
		}
		q.StartingAfter = p.Next
	}
	if pages != 2 { // 9 rows, 4 a page: the third page ends it
		t.Errorf("%d continued pages for 9 rows examined 4 at a time, want 2", pages)
	}
	walk := func(q ports.EventQuery, newer bool) []string {
		var got []string
		for range 20 {
			p, err := db.ListEvents(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			ids := eventIDs(p.Events)
			if newer {
				slices.Reverse(ids)
			}
			got = append(got, ids...)
			if !p.More {
				return got
			}
			if newer {
				q.EndingBefore = p.Next
			} else {
				q.StartingAfter = p.Next
			}
		}
		t.Fatal("the cursors never end")
		return nil
	}
	typed := ports.EventQuery{Scope: testA, Limit: 3, Types: []domain.EventType{domain.EventChargeCreated}}
	if got := walk(typed, false); !slices.Equal(got, newestFirst) {
		t.Errorf("older walk %v, want %v", got, newestFirst)
	}
	typed.EndingBefore = written[0].ID
	if got := walk(typed, true); !slices.Equal(got, created[1:]) {
		t.Errorf("newer walk %v, want %v", got, created[1:])
	}
}

// EventHead is the newest place in write order; EventScopesSince names
// each scope with events after a place once, with its newest place; a
// list with AfterSeq shows only what came after.
func testEventHeadAndScopes(t *testing.T, db *store.DB) {
	ctx := t.Context()
	if h, err := db.EventHead(ctx); err != nil || h != 0 {
		t.Fatalf("head of no events: %d %v", h, err)
	}
	seedEvents(t, db, testA, 2)
	mark, err := db.EventHead(ctx)
	if err != nil || mark <= 0 {
		t.Fatalf("head: %d %v", mark, err)
	}
	if sc, err := db.EventScopesSince(ctx, mark, 10); err != nil || len(sc) != 0 {
		t.Fatalf("scopes since the head: %v %v", sc, err)
	}
	seedEvents(t, db, liveB, 2)
	a := seedEvents(t, db, testA, 1)
	sc, err := db.EventScopesSince(ctx, mark, 10)
	if err != nil || len(sc) != 2 {
		t.Fatalf("scopes since the mark: %v %v", sc, err)
	}
	head, _ := db.EventHead(ctx)
	for _, s := range sc {
		if s.Scope != testA && s.Scope != liveB || s.Seq <= mark || s.Seq > head {
			t.Errorf("scope %+v", s)
		}
		if s.Scope == testA && s.Seq != head {
			t.Errorf("testA's newest %d, want the head %d", s.Seq, head)
		}
	}
	if one, err := db.EventScopesSince(ctx, mark, 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %v %v", one, err)
	}
	p, err := db.ListEvents(ctx, ports.EventQuery{Scope: testA, Limit: 10, AfterSeq: mark})
	if want := []string{a[1].ID, a[0].ID}; err != nil || !slices.Equal(eventIDs(p.Events), want) {
		t.Errorf("after the mark: %v, want %v (err %v)", eventIDs(p.Events), want, err)
	}
}
