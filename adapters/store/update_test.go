package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func testUpdateChargeSavesStateAndEvents(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := newCharge(t, liveA, baseTime, nil)
	created := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	mustCreate(t, db, c, created, nil)

	var want domain.ChargeSnapshot
	var changed []domain.Event
	at := baseTime.Add(2 * time.Second)
	err := db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		prev := c.Status()
		attachPix(t, c, at)
		if err := c.Cancel(at.Add(time.Second)); err != nil {
			return nil, err
		}
		want = c.Snapshot()
		changed = chargeEvents(t, c, prev, domain.TransitionEvents(prev, c.Status()), at)
		return changed, nil
	}))
	if err != nil {
		t.Fatalf("UpdateCharge: %v", err)
	}
	got := mustGet(t, db, liveA, c.ID())
	assertSnapshot(t, got, want)
	if got.Status() != domain.TxCancelled {
		t.Errorf("status %s, want CANCELLED", got.Status())
	}
	assertEvents(t, db, liveA, c.ID(), append(created, changed...))

	// No events is fine too.
	err = db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(*domain.Charge) ([]domain.Event, error) { return nil, nil }))
	if err != nil {
		t.Fatalf("UpdateCharge without events: %v", err)
	}
	assertEvents(t, db, liveA, c.ID(), append(created, changed...))
}

func testUpdateChargeRollsBackOnError(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := newCharge(t, liveA, baseTime, nil)
	created := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	mustCreate(t, db, c, created, nil)
	before := mustGet(t, db, liveA, c.ID()).Snapshot()

	errBoom := errors.New("acquirer said no")
	err := db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		attachPix(t, c, baseTime.Add(time.Second))
		return chargeEvents(t, c, domain.TxPending, []domain.EventType{domain.EventPaymentStatusChanged}, baseTime), errBoom
	}))
	if err != errBoom { // fn's error must come back unchanged, not even wrapped
		t.Fatalf("UpdateCharge returned %v, want fn's error itself", err)
	}
	assertSnapshot(t, mustGet(t, db, liveA, c.ID()), before)
	assertEvents(t, db, liveA, c.ID(), created)

	// A domain sentinel comes back as is, too.
	err = db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		return nil, c.ConfirmReturn(baseTime)
	}))
	if !errors.Is(err, domain.ErrInvalidTransition) {
		t.Fatalf("UpdateCharge: err %v, want ErrInvalidTransition", err)
	}
}

func testUpdateChargeOutOfScope(t *testing.T, db *store.DB) {
	err := db.UpdateCharge(t.Context(), liveA, newRawID(t), changeEvents(func(*domain.Charge) ([]domain.Event, error) {
		t.Error("fn called for a missing charge")
		return nil, nil
	}))
	if !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("UpdateCharge of a missing charge: err %v, want ErrNotFound", err)
	}
}

// testConcurrentUpdatesLoseNothing runs read-modify-write increments of
// refunded_amount from many goroutines, each holding the row a little while
// so that without the lock they would interleave and overwrite each other.
func testConcurrentUpdatesLoseNothing(t *testing.T, db *store.DB) {
	concurrentIncrements(t, db)
}

// TestSQLiteTwoHandlesLoseNothing does the same through two stores on one
// file, as two processes would: each transaction takes the file's write
// lock at BEGIN (IMMEDIATE) and the other waits (busy_timeout).
func TestSQLiteTwoHandlesLoseNothing(t *testing.T) {
	t.Parallel()
	dsn := testenv.SQLiteDSN(t)
	concurrentIncrements(t, openStore(t, dsn), openStore(t, dsn))
}

func concurrentIncrements(t *testing.T, dbs ...*store.DB) {
	const n = 20
	c := newCharge(t, liveA, baseTime, func(p *domain.NewChargeParams) { p.Amount = 1000 })
	mustCreate(t, dbs[0], c, nil, nil)

	var wg sync.WaitGroup
	for i := range n {
		db := dbs[i%len(dbs)]
		wg.Go(func() {
			err := db.UpdateCharge(context.Background(), liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
				s := c.Snapshot()
				read := s.RefundedAmount
				time.Sleep(2 * time.Millisecond) // widen the window a lost update needs
				s.RefundedAmount = read + 1
				s.Metadata[fmt.Sprintf("step_%02d", read)] = float64(i)
				// fn may change the charge only through *c: replace it.
				*c = *domain.UnmarshalChargeFromStorage(s)
				return chargeEvents(t, c, c.Status(), []domain.EventType{domain.EventPaymentStatusChanged}, baseTime), nil
			}))
			if err != nil {
				t.Errorf("UpdateCharge: %v", err)
			}
		})
	}
	wg.Wait()

	got := mustGet(t, dbs[0], liveA, c.ID()).Snapshot()
	if got.RefundedAmount != n {
		t.Errorf("refunded_amount = %d after %d increments: updates were lost", got.RefundedAmount, n)
	}
	for i := range n {
		if _, ok := got.Metadata[fmt.Sprintf("step_%02d", i)]; !ok {
			t.Errorf("no update saw the counter at %d", i)
		}
	}
	evs, err := dbs[0].ListChargeEvents(t.Context(), liveA, c.ID())
	if err != nil || len(evs) != n {
		t.Errorf("%d events (err %v), want %d", len(evs), err, n)
	}
}
