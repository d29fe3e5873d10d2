package store_test

import (
	"errors"
	mrand "math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// seedList creates n charges in scope, two per microsecond so that ties on
// created_at are broken by id, in random order, and returns them newest
// first as the store must list them.
func seedList(t *testing.T, db *store.DB, scope ports.Scope, n int, edit func(i int, p *domain.NewChargeParams)) []*domain.Charge {
	t.Helper()
	charges := make([]*domain.Charge, n)
	for i := range n {
		charges[i] = newCharge(t, scope, baseTime.Add(time.Duration(i/2)*time.Microsecond), func(p *domain.NewChargeParams) {
			if edit != nil {
				edit(i, p)
			}
		})
	}
	shuffled := slices.Clone(charges)
	mrand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, c := range shuffled {
		mustCreate(t, db, c, nil, nil)
	}
	sort.Slice(charges, func(i, j int) bool {
		a, b := charges[i].Snapshot(), charges[j].Snapshot()
		if !micro(a.CreatedAt).Equal(micro(b.CreatedAt)) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	return charges
}

func ids(cs []*domain.Charge) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID()
	}
	return out
}

// listAll pages through q and checks hasMore on every page.
func listAll(t *testing.T, db *store.DB, q ports.ChargeQuery) (all []*domain.Charge, pages int) {
	t.Helper()
	for {
		page, more, err := db.ListCharges(t.Context(), q)
		if err != nil {
			t.Fatalf("ListCharges %+v: %v", q, err)
		}
		pages++
		all = append(all, page...)
		if !more {
			if len(page) > q.Limit {
				t.Fatalf("page of %d for limit %d", len(page), q.Limit)
			}
			return all, pages
		}
		if len(page) != q.Limit {
			t.Fatalf("page %d has %d charges and hasMore, want a full page of %d", pages, len(page), q.Limit)
		}
		q.StartingAfter = page[len(page)-1].ID()
		if pages > 100 {
			t.Fatal("pagination does not end")
		}
	}
}

func testListChargesPaginates(t *testing.T, db *store.DB) {
	want := seedList(t, db, liveA, 25, nil)
	seedList(t, db, testA, 3, nil) // other scopes must not show
	seedList(t, db, liveB, 3, nil)

	got, pages := listAll(t, db, ports.ChargeQuery{Scope: liveA, Limit: 10})
	if pages != 3 {
		t.Errorf("%d pages of 10 for 25 charges, want 3", pages)
	}
	if !slices.Equal(ids(got), ids(want)) {
		t.Errorf("listing order\n got: %v\nwant: %v", ids(got), ids(want))
	}

	// An exact multiple of the limit ends with hasMore false on the last
	// full page.
	page, more, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: 5, StartingAfter: want[19].ID()})
	if err != nil || more || len(page) != 5 {
		t.Errorf("last full page: %d charges, hasMore %v, err %v; want 5, false", len(page), more, err)
	}
	for _, limit := range []int{0, 101} {
		if _, _, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: limit}); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}
}

func testListChargesFilters(t *testing.T, db *store.DB) {
	docs := []string{"529.982.247-25", "111.444.777-35", ""}
	all := seedList(t, db, liveA, 30, func(i int, p *domain.NewChargeParams) {
		p.Customer.Document = docs[i%3]
	})
	// Open a third of them for payment and cancel another third.
	status := map[string]domain.TxStatus{}
	for i, c := range all {
		switch i % 3 {
		case 0:
			status[c.ID()] = domain.TxPending
			continue
		case 1:
			status[c.ID()] = domain.TxWaitingPayment
		case 2:
			status[c.ID()] = domain.TxCancelled
		}
		err := db.UpdateCharge(t.Context(), liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
			if status[c.ID()] == domain.TxCancelled {
				return nil, c.Cancel(baseTime.Add(time.Hour))
			}
			attachPix(t, c, baseTime.Add(time.Hour))
			return nil, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
	}
	filter := func(keep func(c domain.ChargeSnapshot) bool) []string {
		var out []string
		for _, c := range all {
			if s := c.Snapshot(); keep(s) {
				out = append(out, s.ID)
			}
		}
		return out
	}
	after, before := micro(baseTime.Add(3*time.Microsecond)), micro(baseTime.Add(11*time.Microsecond))
	tests := []struct {
		name string
		q    ports.ChargeQuery
		want []string
	}{
		{"statuses", ports.ChargeQuery{Statuses: []domain.TxStatus{domain.TxPending, domain.TxCancelled}},
			filter(func(s domain.ChargeSnapshot) bool { return status[s.ID] != domain.TxWaitingPayment })},
		{"created range inclusive", ports.ChargeQuery{CreatedAfter: &after, CreatedBefore: &before},
			filter(func(s domain.ChargeSnapshot) bool {
				ct := micro(s.CreatedAt)
				return !ct.Before(after) && !ct.After(before)
			})},
		{"customer document normalised", ports.ChargeQuery{CustomerDocument: "52998224725"},
			filter(func(s domain.ChargeSnapshot) bool { return s.Customer.Document == docs[0] })},
		{"customer document as typed", ports.ChargeQuery{CustomerDocument: "111.444.777-35"},
			filter(func(s domain.ChargeSnapshot) bool { return s.Customer.Document == docs[1] })},
		{"document that normalises to nothing", ports.ChargeQuery{CustomerDocument: " ./- "}, nil},
		{"all filters", ports.ChargeQuery{
			Statuses: []domain.TxStatus{domain.TxWaitingPayment}, CustomerDocument: "111.444.777-35",
			CreatedAfter: &after, CreatedBefore: &before,
		}, filter(func(s domain.ChargeSnapshot) bool {
			ct := micro(s.CreatedAt)
			return status[s.ID] == domain.TxWaitingPayment && s.Customer.Document == docs[1] &&
				!ct.Before(after) && !ct.After(before)
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Scope, q.Limit = liveA, 3 // small pages: filters must hold across cursors
			got, _ := listAll(t, db, q)
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("\n got: %v\nwant: %v", ids(got), tt.want)
			}
		})
	}
}

func testListChargesCursorOutOfScope(t *testing.T, db *store.DB) {
	seedList(t, db, liveA, 3, nil)
	other := seedList(t, db, liveB, 1, nil)
	for _, cursor := range []string{newRawID(t), other[0].ID()} {
		_, _, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: 10, StartingAfter: cursor})
		if !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("cursor %s: err %v, want ErrNotFound", cursor, err)
		}
	}
}

// testTimestampsOrderToTheMicrosecond stores instants whose textual forms
// would sort wrongly with trimmed fractions (…05Z after …05.5Z) and checks
// order and inclusive bounds to the microsecond.
func testTimestampsOrderToTheMicrosecond(t *testing.T, db *store.DB) {
	sec := time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)
	offsets := []time.Duration{
		-time.Microsecond, 0, time.Microsecond, 2 * time.Microsecond, 10 * time.Microsecond,
		100 * time.Microsecond, 100 * time.Millisecond, 500 * time.Millisecond,
		999999 * time.Microsecond, time.Second, time.Second + 1*time.Microsecond,
	}
	byOffset := map[time.Duration]string{}
	var charges []*domain.Charge
	for _, off := range offsets {
		c := newCharge(t, liveA, sec.Add(off), nil)
		byOffset[off] = c.ID()
		charges = append(charges, c)
	}
	mrand.Shuffle(len(charges), func(i, j int) { charges[i], charges[j] = charges[j], charges[i] })
	for _, c := range charges {
		mustCreate(t, db, c, nil, nil)
	}
	idsOf := func(offs ...time.Duration) []string {
		var out []string
		for i := len(offs) - 1; i >= 0; i-- { // newest first
			out = append(out, byOffset[offs[i]])
		}
		return out
	}
	list := func(after, before *time.Time) []string {
		got, _ := listAll(t, db, ports.ChargeQuery{Scope: liveA, Limit: 100, CreatedAfter: after, CreatedBefore: before})
		return ids(got)
	}
	at := func(d time.Duration) *time.Time { v := sec.Add(d); return &v }

	if got, want := list(nil, nil), idsOf(offsets...); !slices.Equal(got, want) {
		t.Errorf("order\n got: %v\nwant: %v", got, want)
	}
	checks := []struct {
		name          string
		after, before *time.Time
		want          []string
	}{
		{"after is inclusive", at(time.Microsecond), nil, idsOf(offsets[2:]...)},
		{"before is inclusive", nil, at(0), idsOf(offsets[:2]...)},
		{"one microsecond window", at(time.Microsecond), at(time.Microsecond), idsOf(time.Microsecond)},
		{"after between microseconds", at(500 * time.Nanosecond), nil, idsOf(offsets[2:]...)},
		{"before between microseconds", nil, at(1500 * time.Nanosecond), idsOf(offsets[:3]...)},
		{"whole second", at(0), at(999999 * time.Microsecond), idsOf(offsets[1:9]...)},
	}
	for _, c := range checks {
		if got := list(c.after, c.before); !slices.Equal(got, c.want) {
			t.Errorf("%s\n got: %v\nwant: %v", c.name, got, c.want)
		}
	}
}

func testListOpenExpired(t *testing.T, db *store.DB) {
	ctx := t.Context()
	sixty := int64(60)
	mk := func(scope ports.Scope, created time.Time, open bool) *domain.Charge {
		c := newCharge(t, scope, created, func(p *domain.NewChargeParams) { p.ExpiresIn = &sixty })
		if open {
			attachPix(t, c, created)
		} else if err := c.Cancel(created); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, db, c, nil, nil)
		return c
	}
	now := baseTime.Truncate(time.Second).Add(time.Hour)
	earliest := mk(liveA, now.Add(-3*time.Minute), true)
	pending := newCharge(t, liveB, now.Add(-2*time.Minute), func(p *domain.NewChargeParams) { p.ExpiresIn = &sixty })
	mustCreate(t, db, pending, nil, nil) // PENDING is open too
	exactlyNow := mk(testA, now.Add(-time.Minute), true)
	mk(liveA, now.Add(-3*time.Minute), false)          // cancelled: not open
	mk(liveA, now.Add(-time.Minute+time.Second), true) // expires a second from now

	refs, err := db.ListOpenExpired(ctx, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []ports.ChargeRef{
		{Scope: liveA, ID: earliest.ID()},
		{Scope: liveB, ID: pending.ID()},
		{Scope: testA, ID: exactlyNow.ID()},
	}
	if !slices.Equal(refs, want) {
		t.Errorf("ListOpenExpired\n got: %v\nwant: %v", refs, want)
	}
	if refs, err := db.ListOpenExpired(ctx, now, 2); err != nil || !slices.Equal(refs, want[:2]) {
		t.Errorf("ListOpenExpired with limit 2: %v, err %v", refs, err)
	}

	// Once expired, a charge is no longer listed.
	err = db.UpdateCharge(ctx, liveA, earliest.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		return nil, c.Expire(now)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if refs, err := db.ListOpenExpired(ctx, now, 10); err != nil || !slices.Equal(refs, want[1:]) {
		t.Errorf("after expiring one: %v, err %v", refs, err)
	}
}
