package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// An instant outside ports.MinTime–MaxTime cannot be written into a
// statement: bun would put its appender's error text where the value
// belongs and send the statement, which the database refuses as a syntax
// error. The store refuses every such statement before it is sent, with
// ports.ErrUnstorableValue, whichever query carries the instant; the same
// characters as data inside a quoted literal are stored and matched as
// written.
func testOutOfRangeInstantsNeverReachTheDatabase(t *testing.T, db *store.DB) {
	ctx := context.Background()
	marked := `it said ?!(x) "?!(" and '?!('`
	c := newCharge(t, liveA, baseTime, func(p *domain.NewChargeParams) { p.Description = marked })
	mustCreate(t, db, c, nil, nil)
	err := db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		attachPix(t, c, baseTime.Add(time.Second))
		return nil, nil
	}))
	if err != nil {
		t.Fatalf("an update of a charge whose description holds %q: %v", marked, err)
	}
	if got := mustGet(t, db, liveA, c.ID()).Snapshot().Description; got != marked {
		t.Errorf("description read back %q, want %q", got, marked)
	}
	if p, err := db.ListEvents(ctx, ports.EventQuery{Scope: liveA, Limit: 10, Types: []domain.EventType{"x'?!(y"}}); err != nil || len(p.Events) != 0 {
		t.Errorf("events of a type holding the mark: %d, %v", len(p.Events), err)
	}

	year10000 := time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.FixedZone("-03", -3*3600))
	year0 := time.Date(0, 12, 31, 23, 0, 0, 0, time.UTC)
	for _, bad := range []struct {
		name          string
		after, before *time.Time
	}{
		{"before in year 10000 UTC", nil, &year10000},
		{"after in year 10000 UTC", &year10000, nil},
		{"after in year 0", &year0, nil},
		{"before in year 0", nil, &year0},
	} {
		_, _, err := db.ListCharges(ctx, ports.ChargeQuery{Scope: liveA, Limit: 10, CreatedAfter: bad.after, CreatedBefore: bad.before})
		wantUnstorable(t, "ListCharges "+bad.name, err)
		_, err = db.ListEvents(ctx, ports.EventQuery{Scope: liveA, Limit: 10, CreatedAfter: bad.after, CreatedBefore: bad.before})
		wantUnstorable(t, "ListEvents "+bad.name, err)
		_, _, err = db.ListPayments(ctx, ports.PaymentQuery{Scope: liveA, Page: 1, Limit: 10, CreatedAfter: bad.after, CreatedBefore: bad.before, Desc: true})
		wantUnstorable(t, "ListPayments "+bad.name, err)
	}
	// A refused statement leaves the connection and the store working.
	edge := ports.MaxTime
	cs, _, err := db.ListCharges(ctx, ports.ChargeQuery{Scope: liveA, Limit: 10, CreatedAfter: &ports.MinTime, CreatedBefore: &edge})
	if err != nil || len(cs) != 1 {
		t.Errorf("list from MinTime to MaxTime: %d charges, %v", len(cs), err)
	}
}

func wantUnstorable(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ports.ErrUnstorableValue) {
		t.Errorf("%s: %v, want ports.ErrUnstorableValue", what, err)
		return
	}
	if strings.Contains(err.Error(), "?!(") || strings.Contains(err.Error(), "SELECT") {
		t.Errorf("%s: the error quotes the statement: %v", what, err)
	}
}
