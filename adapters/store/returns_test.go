package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func newE2E(t *testing.T, at time.Time) string {
	t.Helper()
	e2e, err := domain.NewEndToEndID("99999999", at, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return e2e
}

// owe writes, in one UpdateCharge of c, the return of Pix e2e (amount,
// due at due) and reports what the change saw of it first.
func owe(t *testing.T, db *store.DB, scope ports.Scope, c *domain.Charge, e2e string, due time.Time) domain.PixReturn {
	t.Helper()
	var r domain.PixReturn
	err := db.UpdateCharge(t.Context(), scope, c.ID(), func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		if _, err := tx.GetPixReturn(ctx, e2e); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("GetPixReturn before it is owed: %v, want ErrNotFound", err)
		}
		var err error
		if r, err = domain.NewPixReturn(c, e2e, 700, domain.ReturnForWrongAmount, baseTime); err != nil {
			return ports.ChargeChange{}, err
		}
		r.DueAt = due
		return ports.ChargeChange{Returns: []domain.PixReturn{r}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// step moves the return of e2e owed by c with fn, under c's lock, and
// returns it as stored before the step.
func step(t *testing.T, db *store.DB, scope ports.Scope, c *domain.Charge, e2e string, fn func(*domain.PixReturn) error) domain.PixReturn {
	t.Helper()
	var before domain.PixReturn
	err := db.UpdateCharge(t.Context(), scope, c.ID(), func(ctx context.Context, _ *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		r, err := tx.GetPixReturn(ctx, e2e)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		before = *r
		if err := fn(r); err != nil {
			return ports.ChargeChange{}, err
		}
		return ports.ChargeChange{Returns: []domain.PixReturn{*r}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return before
}

func microReturn(r domain.PixReturn) domain.PixReturn {
	r.DueAt, r.CreatedAt, r.UpdatedAt = micro(r.DueAt), micro(r.CreatedAt), micro(r.UpdatedAt)
	return r
}

// testPixReturns: a return is written with its charge's change, read back
// under the charge's lock (and only that charge's), claimed once it is due
// and not again while leased, moved on by upsert with what belongs to the
// Pix unchanged, and listed by status for an operator.
func testPixReturns(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := newCharge(t, liveA, baseTime, nil)
	other := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, c, nil, nil)
	mustCreate(t, db, other, nil, nil)
	e2e := newE2E(t, baseTime)
	due := baseTime.Add(15 * time.Second)
	want := microReturn(owe(t, db, liveA, c, e2e, due))

	got := step(t, db, liveA, c, e2e, func(*domain.PixReturn) error { return nil })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip\n got: %+v\nwant: %+v", got, want)
	}
	err := db.UpdateCharge(ctx, liveA, other.ID(), func(ctx context.Context, _ *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		_, err := tx.GetPixReturn(ctx, e2e)
		return ports.ChargeChange{}, err
	})
	if !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("another charge reads the return: %v", err)
	}

	if rs, err := db.ClaimPixReturns(ctx, baseTime, baseTime.Add(time.Minute), 10); err != nil || len(rs) != 0 {
		t.Fatalf("claim before due: %v, %v", rs, err)
	}
	now, lease := due.Add(time.Second), due.Add(20*time.Second)
	rs, err := db.ClaimPixReturns(ctx, now, lease, 10)
	if err != nil || len(rs) != 1 || rs[0].EndToEndID != e2e || !rs[0].DueAt.Equal(micro(lease)) {
		t.Fatalf("claim when due: %+v, %v", rs, err)
	}
	if rs, err := db.ClaimPixReturns(ctx, now.Add(time.Second), lease.Add(time.Minute), 10); err != nil || len(rs) != 0 {
		t.Fatalf("claimed again while leased: %v, %v", rs, err)
	}

	at := lease.Add(time.Second)
	step(t, db, liveA, c, e2e, func(r *domain.PixReturn) error {
		if err := r.Accept("psp:1", at, at.Add(time.Minute)); err != nil {
			return err
		}
		if err := r.Refuse("recusada", 5, at, at.Add(time.Minute)); err != nil {
			return err
		}
		r.Amount, r.Reason = 1, domain.ReturnForClosedCharge // what belongs to the Pix is kept
		return nil
	})
	got = step(t, db, liveA, c, e2e, func(*domain.PixReturn) error { return nil })
	if got.Status != domain.PixReturnRequested || got.Attempt != 2 || got.Failure != "recusada" || got.ProviderRef != "" ||
		!got.DueAt.Equal(micro(at.Add(time.Minute))) || got.Amount != 700 || got.Reason != domain.ReturnForWrongAmount ||
		!got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("after the refusal: %+v", got)
	}

	// A FAILED return of another scope, for the operator's list.
	b := newCharge(t, liveB, baseTime, nil)
	mustCreate(t, db, b, nil, nil)
	e2eB := newE2E(t, baseTime.Add(time.Second))
	owe(t, db, liveB, b, e2eB, time.Time{})
	step(t, db, liveB, b, e2eB, func(r *domain.PixReturn) error {
		if err := r.Accept("psp:b", at, at); err != nil {
			return err
		}
		return r.Refuse("recusada", 1, at, at)
	})
	failed, err := db.ListPixReturns(ctx, domain.PixReturnFailed, 10)
	if err != nil || len(failed) != 1 || failed[0].EndToEndID != e2eB || failed[0].AccountID != liveB.AccountID ||
		failed[0].Mode != liveB.Mode || failed[0].ChargeID != b.ID() {
		t.Fatalf("FAILED returns: %+v, %v", failed, err)
	}
	if rs, err := db.ClaimPixReturns(ctx, at.Add(time.Hour), at.Add(2*time.Hour), 10); err != nil || len(rs) != 1 || rs[0].EndToEndID != e2e {
		t.Fatalf("claim: %+v, %v (a FAILED return is never claimed)", rs, err)
	}
	requested, err := db.ListPixReturns(ctx, domain.PixReturnRequested, 10)
	if err != nil || len(requested) != 1 || requested[0].EndToEndID != e2e {
		t.Errorf("REQUESTED returns: %+v, %v", requested, err)
	}
}

// Returns workers of several processes claim at once: each due return is
// handed to one of them, never two (a devolução sent twice would pay the
// payer twice), until none is left.
func testConcurrentReturnClaims(t *testing.T, db *store.DB) {
	const n = 40
	due := baseTime.Add(15 * time.Second)
	for range n {
		c := newCharge(t, liveA, baseTime, nil)
		mustCreate(t, db, c, nil, nil)
		owe(t, db, liveA, c, newE2E(t, baseTime), due)
	}
	now := due.Add(time.Second)
	var (
		mu  sync.Mutex
		got = map[string]int{}
		wg  sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				rs, err := db.ClaimPixReturns(context.Background(), now, now.Add(time.Minute), 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(rs) == 0 {
					return
				}
				mu.Lock()
				for _, r := range rs {
					got[r.EndToEndID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != n {
		t.Errorf("%d returns claimed, want all %d", len(got), n)
	}
	for e2e, k := range got {
		if k != 1 {
			t.Errorf("return %s claimed %d times", e2e, k)
		}
	}
}
