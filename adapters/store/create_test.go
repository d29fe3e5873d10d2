package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func testDuplicateIdempotencyKeyWritesNothing(t *testing.T, db *store.DB) {
	ctx := t.Context()
	first := newCharge(t, liveA, baseTime, nil)
	rec := idemRecord(liveA, "order-42-attempt", first.ID())
	mustCreate(t, db, first, chargeEvents(t, first, "", domain.CreationEvents(), baseTime), rec)

	got, err := db.GetIdempotencyRecord(ctx, rec.IdempotencyKey)
	if err != nil {
		t.Fatalf("GetIdempotencyRecord: %v", err)
	}
	want := *rec
	want.CreatedAt = micro(want.CreatedAt)
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("idempotency record\n got: %+v\nwant: %+v", *got, want)
	}

	second := newCharge(t, liveA, baseTime, nil)
	err = db.CreateCharge(ctx, second, chargeEvents(t, second, "", domain.CreationEvents(), baseTime),
		idemRecord(liveA, rec.Key, second.ID()))
	if !errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Fatalf("second CreateCharge with the key: err %v, want ErrIdempotencyKeyExists", err)
	}
	if _, err := db.GetCharge(ctx, liveA, second.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the refused charge was written (GetCharge err %v)", err)
	}
	if evs, err := db.ListChargeEvents(ctx, liveA, second.ID()); err != nil || len(evs) != 0 {
		t.Errorf("the refused charge's events were written: %d, err %v", len(evs), err)
	}
	if got, _ := db.GetIdempotencyRecord(ctx, rec.IdempotencyKey); got == nil || got.ResourceID != first.ID() {
		t.Errorf("the record now points at %v, want the first charge", got)
	}

	// The key is scoped: the same key in test mode or another account is
	// a different key.
	for _, other := range []ports.Scope{testA, liveB} {
		c := newCharge(t, other, baseTime, nil)
		if err := db.CreateCharge(ctx, c, nil, idemRecord(other, rec.Key, c.ID())); err != nil {
			t.Errorf("same key in scope %v: %v", other, err)
		}
	}
	if _, err := db.GetIdempotencyRecord(ctx, ports.IdempotencyKey{Scope: liveA, Key: "unused"}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("GetIdempotencyRecord of an unused key: err %v, want ErrNotFound", err)
	}
}

func testConcurrentIdempotencyKeyHasOneWinner(t *testing.T, db *store.DB) {
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
	)
	for range n {
		c := newCharge(t, liveA, baseTime, nil)
		evs := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
		wg.Go(func() {
			err := db.CreateCharge(context.Background(), c, evs, idemRecord(liveA, "same-key-everywhere", c.ID()))
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, c.ID())
				mu.Unlock()
			case !errors.Is(err, ports.ErrIdempotencyKeyExists):
				t.Errorf("CreateCharge: %v", err)
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d creates won the key, want exactly 1", len(winners))
	}
	list, _, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID() != winners[0] {
		t.Errorf("%d charges stored, want only the winner", len(list))
	}
}

func testDuplicateChargeIDIsDuplicate(t *testing.T, db *store.DB) {
	c := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, c, nil, nil)
	err := db.CreateCharge(t.Context(), c, nil, idemRecord(liveA, "fresh-key", c.ID()))
	if !errors.Is(err, ports.ErrDuplicate) || errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Fatalf("CreateCharge of an existing id: err %v, want ErrDuplicate", err)
	}
	// The transaction rolled back: the fresh key is still free.
	if _, err := db.GetIdempotencyRecord(t.Context(), ports.IdempotencyKey{Scope: liveA, Key: "fresh-key"}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("key of the failed create: err %v, want ErrNotFound", err)
	}
}

// Concurrent creates share batches on Postgres (coalesce.go): each still
// gets exactly its own outcome. Two of them use the same key, so a batch
// may fail on it and be run again create by create: one of the two wins,
// and every other create commits with its events and record.
func testConcurrentCreatesKeepTheirOwnOutcome(t *testing.T, db *store.DB) {
	const n = 48
	type result struct {
		c   *domain.Charge
		evs []domain.Event
		key string
		err error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		c := newCharge(t, liveA, baseTime, nil)
		key := "batch-key-" + c.ID()
		if i < 2 {
			key = "batch-shared-key"
		}
		results[i] = result{c: c, evs: chargeEvents(t, c, "", domain.CreationEvents(), baseTime), key: key}
		wg.Go(func() {
			r := &results[i]
			r.err = db.CreateCharge(context.Background(), r.c, r.evs, idemRecord(liveA, r.key, r.c.ID()))
		})
	}
	wg.Wait()
	winners := 0
	for i, r := range results {
		if i < 2 && errors.Is(r.err, ports.ErrIdempotencyKeyExists) {
			if _, err := db.GetCharge(t.Context(), liveA, r.c.ID()); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("the losing create's charge was written (err %v)", err)
			}
			continue
		}
		if r.err != nil {
			t.Errorf("create %d: %v", i, r.err)
			continue
		}
		winners++
		assertSnapshot(t, mustGet(t, db, liveA, r.c.ID()), stored(r.c.Snapshot()))
		assertEvents(t, db, liveA, r.c.ID(), r.evs)
		rec, err := db.GetIdempotencyRecord(t.Context(), ports.IdempotencyKey{Scope: liveA, Key: r.key})
		if err != nil || rec.ResourceID != r.c.ID() {
			t.Errorf("create %d: record %+v, %v", i, rec, err)
		}
	}
	if winners != n-1 {
		t.Errorf("%d creates committed, want %d (all but one of the shared key's two)", winners, n-1)
	}
}

// A charge create's answer is its charge.created event's data.object: when
// the write names that event (AnswerEvent), it is stored once, in the
// event, and the record names the event. Replays
// read it back byte for byte, before and after the event's retention
// sweep (which gives the answer back to the record). An answer that is no
// event's object, or whose write names no event, is stored in the record.
func testAnswerIsStoredOnce(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := newCharge(t, liveA, baseTime, nil)
	attachPix(t, c, baseTime)
	evs := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	answer, err := json.Marshal(c.Public(links))
	if err != nil {
		t.Fatal(err)
	}
	rec := idemRecord(liveA, "answer-stored-once", c.ID())
	rec.Body, rec.AnswerEvent = answer, evs[0].ID
	mustCreate(t, db, c, evs, rec)

	other := newCharge(t, liveA, baseTime, nil)
	otherRec := idemRecord(liveA, "answer-of-its-own", other.ID()) // {"id":"ch_…"}: no event's object
	mustCreate(t, db, other, chargeEvents(t, other, "", domain.CreationEvents(), baseTime), otherRec)

	// Two more answers in events, so that the sweep gives several back
	// at once (one statement on Postgres), each to its own record.
	more := make([]*ports.IdempotencyRecord, 2)
	for i := range more {
		c := newCharge(t, liveA, baseTime, nil)
		attachPix(t, c, baseTime)
		body, err := json.Marshal(c.Public(links))
		if err != nil {
			t.Fatal(err)
		}
		more[i] = idemRecord(liveA, fmt.Sprintf("answer-stored-once-%d", i), c.ID())
		cevs := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
		more[i].Body, more[i].AnswerEvent = body, cevs[0].ID
		mustCreate(t, db, c, cevs, more[i])
	}
	unnamed := newCharge(t, liveA, baseTime, nil)
	attachPix(t, unnamed, baseTime)
	unnamedBody, err := json.Marshal(unnamed.Public(links))
	if err != nil {
		t.Fatal(err)
	}
	unnamedRec := idemRecord(liveA, "answer-unnamed", unnamed.ID())
	unnamedRec.Body = unnamedBody // the event's object, but the write names no event
	mustCreate(t, db, unnamed, chargeEvents(t, unnamed, "", domain.CreationEvents(), baseTime), unnamedRec)

	stored := func(key string) (body []byte, event string) {
		t.Helper()
		var ev *string
		err := db.Bun().NewRaw(`SELECT body, body_event FROM idempotency_records WHERE account_id = ? AND mode = ? AND "key" = ?`,
			liveA.AccountID, string(liveA.Mode), key).Scan(ctx, &body, &ev)
		if err != nil {
			t.Fatal(err)
		}
		if ev != nil {
			event = *ev
		}
		return body, event
	}
	replays := func(when string) {
		t.Helper()
		for _, want := range append([]*ports.IdempotencyRecord{rec, otherRec, unnamedRec}, more...) {
			got, err := db.GetIdempotencyRecord(ctx, want.IdempotencyKey)
			if err != nil {
				t.Errorf("%s, key %s: %v", when, want.Key, err)
			} else if !bytes.Equal(got.Body, want.Body) || got.ResourceID != want.ResourceID {
				t.Errorf("%s, key %s replays %q for %s, want %q", when, want.Key, got.Body, got.ResourceID, want.Body)
			}
			// The live create's replay check reads the record its own way.
			got, err = db.IdempotencyRecordOrIntent(ctx, ports.ProviderIntent{Key: want.IdempotencyKey, TxID: "unused", CreatedAt: baseTime})
			if err != nil || !bytes.Equal(got.Body, want.Body) {
				t.Errorf("%s, the replay check of key %s: %v", when, want.Key, err)
			}
		}
	}
	body, event := stored(rec.Key)
	if len(body) != 0 || event != evs[0].ID || evs[0].Type != domain.EventChargeCreated {
		t.Errorf("the record keeps %d bytes and names event %q, want none and the charge.created event %s", len(body), event, evs[0].ID)
	}
	var answers *string
	if err := db.Bun().NewRaw("SELECT answers_key FROM charge_events WHERE id = ?", evs[0].ID).Scan(ctx, &answers); err != nil || answers == nil || *answers != rec.Key {
		t.Errorf("the event answers key %v (err %v), want %s", answers, err, rec.Key)
	}
	if body, event := stored(otherRec.Key); !bytes.Equal(body, otherRec.Body) || event != "" {
		t.Errorf("an answer of its own is stored as %q naming event %q, want itself and none", body, event)
	}
	if body, event := stored(unnamedRec.Key); !bytes.Equal(body, unnamedRec.Body) || event != "" {
		t.Errorf("an answer whose write names no event is stored as %q naming event %q, want itself and none", body, event)
	}
	replays("before the retention sweep")

	if _, err := db.DispatchEvents(ctx, 100, func(ports.OutboxBatch) ([]domain.WebhookDelivery, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := db.DeleteEventsBefore(ctx, baseTime.Add(time.Hour), 100); err != nil || n != 10 {
		t.Fatalf("the sweep deleted %d events (err %v), want 10 (two of each of five creates)", n, err)
	}
	for _, r := range append([]*ports.IdempotencyRecord{rec}, more...) {
		if body, event := stored(r.Key); !bytes.Equal(body, r.Body) || event != "" {
			t.Errorf("after the sweep the record of %s keeps %q naming event %q, want its answer and none", r.Key, body, event)
		}
	}
	if !bytes.Equal(rec.Body, answer) {
		t.Fatal("the first record's answer changed")
	}
	replays("after the retention sweep")
}
