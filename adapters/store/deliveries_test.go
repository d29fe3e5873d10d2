package store_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func testDispatchFansOutOnce(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	newEndpoint(t, db, scope, domain.EventChargeCreated)
	newEndpoint(t, db, scope, domain.EventChargeCreated, domain.EventPaymentCreated)
	newEndpoint(t, db, scope, domain.EventChargePaid)
	newEndpoint(t, db, ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}, domain.EventChargeCreated)
	// 3 endpoint deliveries + 1 to the webhookUrl (payment.created).
	if n := seedDeliveries(t, db, scope, "https://merchant.example.com/tx"); n != 4 {
		t.Fatalf("fan-out made %d deliveries, want 4", n)
	}
	n, err := db.DispatchEvents(ctx, 100, func(ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
		t.Fatal("dispatched events handed out again")
		return nil, nil
	})
	if err != nil || n != 0 {
		t.Fatalf("second dispatch: %d, %v", n, err)
	}
	// A failing fan-out rolls back: the events stay undispatched.
	c := newCharge(t, scope, baseTime, nil)
	mustCreate(t, db, c, chargeEvents(t, c, "", domain.CreationEvents(), baseTime), nil)
	boom := errors.New("boom")
	if _, err := db.DispatchEvents(ctx, 100, func(ports.OutboxBatch) ([]domain.WebhookDelivery, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("fan error: %v", err)
	}
	n, err = db.DispatchEvents(ctx, 100, fanAll(t, baseTime))
	if err != nil || n != 1 { // one entry: the create's two events
		t.Fatalf("dispatch after rollback: %d, %v", n, err)
	}
	ds, total, err := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, Limit: 100})
	if err != nil || total != 7 || len(ds) != 7 {
		t.Fatalf("deliveries %d/%d, %v", len(ds), total, err)
	}
	for _, d := range ds {
		if len(d.Payload) == 0 || d.Status != domain.DeliveryPending || d.MaxAttempts != domain.MaxDeliveryAttempts || d.EventID == "" {
			t.Fatalf("delivery %+v", d)
		}
		// The outbox hands fan events without payloads; each delivery is
		// stored with its event's payload as committed.
		ev, err := db.GetEvent(ctx, scope, d.EventID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(d.Payload, ev.Payload) {
			t.Fatalf("delivery %s of %s carries %q, want the event's %q", d.ID, d.EventID, d.Payload, ev.Payload)
		}
	}
}

// The fan-out sees each event's charge webhookUrl on legacy events only
// (the only ones it receives), and whatever payload fan puts on a
// delivery, the stored one is the event's — also for an event the read
// left its payload out of (no endpoint in its scope, no URL on its charge).
func testDispatchPayloadsFromEvents(t *testing.T, db *store.DB) {
	t.Run("endpoint and url", func(t *testing.T) {
		scope := webhookAccount(t, db)
		newEndpoint(t, db, scope, domain.EventChargeCreated)
		dispatchForgingPayloads(t, db, scope, "https://merchant.example.com/tx")
	})
	t.Run("neither", func(t *testing.T) {
		dispatchForgingPayloads(t, db, webhookAccount(t, db), "")
	})
}

func dispatchForgingPayloads(t *testing.T, db *store.DB, scope ports.Scope, webhookURL string) {
	ctx := context.Background()
	c := newCharge(t, scope, baseTime, func(p *domain.NewChargeParams) { p.WebhookURL = webhookURL })
	evs := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	mustCreate(t, db, c, evs, nil)
	var made []domain.WebhookDelivery
	n, err := db.DispatchEvents(ctx, 100, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
		for _, ev := range b.Events {
			if want := ev.Type.Legacy() && webhookURL != ""; (ev.WebhookURL != "") != want {
				t.Errorf("event %s (%s) has webhook URL %q; want one only on legacy events", ev.ID, ev.Type, ev.WebhookURL)
			}
			d := domain.NewWebhookDelivery(domain.PrefixDelivery+newRawID(t), ev.Event, "", "https://merchant.example.com/tx", baseTime)
			d.Payload = []byte(`{"forged":true}`)
			made = append(made, d)
		}
		return made, nil
	})
	if err != nil || n != 1 || len(made) != len(evs) {
		t.Fatalf("dispatched %d events in %d entries (err %v), want %d in 1", len(made), n, err, len(evs))
	}
	stored, _, err := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, Limit: 100})
	if err != nil || len(stored) != len(made) {
		t.Fatalf("%d deliveries stored (err %v), want %d", len(stored), err, len(made))
	}
	byID := map[string]domain.WebhookDelivery{}
	for _, d := range stored {
		byID[d.ID] = d
	}
	for i, d := range made {
		got := byID[d.ID]
		if got.EventID != evs[i].ID || !bytes.Equal(got.Payload, evs[i].Payload) {
			t.Errorf("delivery %s of %s stored with %q, want its event's %q", d.ID, got.EventID, got.Payload, evs[i].Payload)
		}
	}
}

// One statement's events can be more than a pass takes (on Postgres they
// share one outbox row): a pass takes the oldest limit of them, the next
// the rest, each once and in the order written; and the retention sweep
// keeps every event from the oldest undispatched one on. The five events
// of one change are stored as three entries, two pairs and one alone: a
// pass of limit 1 takes a pair whole.
func testDispatchSplitsAStatement(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	c := newCharge(t, scope, baseTime, nil)
	types := []domain.EventType{domain.EventChargeCreated, domain.EventPaymentCreated, domain.EventChargePaid,
		domain.EventPaymentCompleted, domain.EventChargeRefunded}
	evs := chargeEvents(t, c, "", types, baseTime)
	mustCreate(t, db, c, evs, nil) // the five events in one statement
	var got []string
	for i, want := range []int{2, 2, 1, 0} {
		before := len(got)
		n, err := db.DispatchEvents(ctx, 1, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
			for _, ev := range b.Events {
				got = append(got, ev.ID)
			}
			return nil, nil
		})
		if err != nil || len(got)-before != want || n != min(want, 1) {
			t.Fatalf("pass %d: dispatched %d events in %d entries (err %v), want %d", i, len(got)-before, n, err, want)
		}
		if len(got) == 2 {
			// The first two are dispatched, the other three not yet.
			if n, err := db.DeleteEventsBefore(ctx, baseTime.Add(time.Hour), 100); err != nil || n != 2 {
				t.Fatalf("retention after the first pass deleted %d (err %v), want the 2 dispatched", n, err)
			}
		}
	}
	var want []string
	for _, ev := range evs {
		want = append(want, ev.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("dispatched %v, want %v in the order written", got, want)
	}
	if n, err := db.DeleteEventsBefore(ctx, baseTime.Add(time.Hour), 100); err != nil || n != 3 {
		t.Errorf("retention once all are dispatched deleted %d (err %v), want 3", n, err)
	}
}

func testClaimLeaseAndComplete(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	e := newEndpoint(t, db, scope, domain.EventChargeCreated)
	seedDeliveries(t, db, scope, "https://merchant.example.com/tx")
	now := baseTime.Add(time.Second)
	claims, err := db.ClaimDeliveries(ctx, now, now.Add(30*time.Second), 10, ports.ClaimCaps{})
	if err != nil || len(claims) != 2 {
		t.Fatalf("claims %d, %v", len(claims), err)
	}
	for _, c := range claims {
		if c.Delivery.Status != domain.DeliveryProcessing || c.Delivery.Attempts != 1 || c.LeaseToken == "" {
			t.Fatalf("claim %+v", c)
		}
		if c.Delivery.EndpointID == e.ID && (c.URL != e.URL || c.Secret != e.Secret) {
			t.Fatalf("endpoint claim url/secret %q %q", c.URL, c.Secret)
		}
		if c.Delivery.EndpointID == "" && (c.URL != "https://merchant.example.com/tx" || c.Secret != "txsecret") {
			t.Fatalf("transaction claim url/secret %q %q", c.URL, c.Secret)
		}
	}
	if more, _ := db.ClaimDeliveries(ctx, now, now.Add(30*time.Second), 10, ports.ClaimCaps{}); len(more) != 0 {
		t.Fatalf("leased deliveries claimed again: %d", len(more))
	}
	// The lease runs out (the worker died): another worker takes them.
	later := now.Add(31 * time.Second)
	again, err := db.ClaimDeliveries(ctx, later, later.Add(30*time.Second), 10, ports.ClaimCaps{})
	if err != nil || len(again) != 2 || again[0].Delivery.Attempts != 2 || again[0].LeaseToken == claims[0].LeaseToken {
		t.Fatalf("reclaim: %+v, %v", again, err)
	}
	old := claims[0].Delivery
	if err := old.RecordAttempt(domain.AttemptResult{StatusCode: 200}, domain.RetrySchedule, later, 0.5); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteDelivery(ctx, old, claims[0].LeaseToken, false); !errors.Is(err, ports.ErrLeaseLost) {
		t.Fatalf("complete under a lost lease: %v", err)
	}
	for _, c := range again {
		d := c.Delivery
		if err := d.RecordAttempt(domain.AttemptResult{StatusCode: 500}, domain.RetrySchedule, later, 0.5); err != nil {
			t.Fatal(err)
		}
		if err := db.CompleteDelivery(ctx, d, c.LeaseToken, false); err != nil {
			t.Fatal(err)
		}
	}
	// Not due before the retry wait (30 s after attempt 2).
	if c, _ := db.ClaimDeliveries(ctx, later.Add(29*time.Second), later.Add(time.Hour), 10, ports.ClaimCaps{}); len(c) != 0 {
		t.Fatalf("claimed before due: %d", len(c))
	}
	due, err := db.ClaimDeliveries(ctx, later.Add(31*time.Second), later.Add(time.Hour), 10, ports.ClaimCaps{})
	if err != nil || len(due) != 2 || due[0].Delivery.Attempts != 3 || due[0].Delivery.LastStatusCode == nil || *due[0].Delivery.LastStatusCode != 500 {
		t.Fatalf("due claims %+v, %v", due, err)
	}
	d := due[0].Delivery
	if err := d.RecordAttempt(domain.AttemptResult{StatusCode: 204}, domain.RetrySchedule, later, 0.5); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteDelivery(ctx, d, due[0].LeaseToken, false); err != nil {
		t.Fatal(err)
	}
	ds, _, _ := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, Status: domain.DeliveryDelivered, Limit: 10})
	if len(ds) != 1 || ds[0].DeliveredAt == nil || ds[0].Attempts != 3 {
		t.Fatalf("delivered %+v", ds)
	}
}

func testInactiveEndpointWaits(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	e := newEndpoint(t, db, scope, domain.EventChargeCreated)
	seedDeliveries(t, db, scope, "")
	inactive, active := domain.EndpointInactive, domain.EndpointActive
	if _, err := db.UpdateEndpoint(ctx, scope, e.ID, ports.EndpointPatch{Status: &inactive}, baseTime); err != nil {
		t.Fatal(err)
	}
	now := baseTime.Add(time.Minute)
	if c, _ := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 10, ports.ClaimCaps{}); len(c) != 0 {
		t.Fatalf("delivery to an INACTIVE endpoint claimed")
	}
	if _, err := db.UpdateEndpoint(ctx, scope, e.ID, ports.EndpointPatch{Status: &active}, baseTime); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 10, ports.ClaimCaps{}); len(c) != 1 {
		t.Fatalf("delivery not claimed after reactivation: %d", len(c))
	}
}

func testListAndStats(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	newEndpoint(t, db, scope, domain.EventChargeCreated, domain.EventPaymentCreated)
	for range 3 {
		seedDeliveries(t, db, scope, "")
	}
	ds, total, err := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, Limit: 4, Offset: 4})
	if err != nil || total != 6 || len(ds) != 2 {
		t.Fatalf("page: %d of %d, %v", len(ds), total, err)
	}
	_, n, _ := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, EventType: domain.EventPaymentCreated, Limit: 10})
	if n != 3 {
		t.Fatalf("eventType filter: %d", n)
	}
	_, n, _ = db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}, Limit: 10})
	if n != 0 {
		t.Fatalf("test mode sees %d live deliveries", n)
	}
	st, err := db.DeliveryStats(ctx, scope)
	if err != nil || st[domain.DeliveryPending] != 6 || len(st) != len(domain.DeliveryStatuses) {
		t.Fatalf("stats %v, %v", st, err)
	}
}

// testConcurrentClaimsNeverOverlap: workers claiming at once never get the
// same delivery (SKIP LOCKED on Postgres, the write lock on SQLite).
func testConcurrentClaimsNeverOverlap(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	newEndpoint(t, db, scope, domain.EventChargeCreated, domain.EventPaymentCreated)
	for range 20 {
		seedDeliveries(t, db, scope, "")
	}
	now := baseTime.Add(time.Second)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				cs, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 3, ports.ClaimCaps{})
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				mu.Lock()
				for _, c := range cs {
					seen[c.Delivery.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 40 {
		t.Fatalf("claimed %d distinct deliveries, want 40", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s claimed %d times", id, n)
		}
	}
}

// security.md, item 7: with a per-endpoint cap, a claim takes at most that
// many of one endpoint's deliveries, counts those already in flight, and
// reaches past one endpoint's backlog to another's.
func testClaimCapsEachEndpoint(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	slow := newEndpoint(t, db, scope, domain.EventChargeCreated)
	for range 6 {
		seedDeliveries(t, db, scope, "") // one delivery each for slow
	}
	fast := newEndpoint(t, db, scope, domain.EventChargeCreated)
	seedDeliveries(t, db, scope, "") // one more each: slow 7, fast 1
	now := baseTime.Add(time.Second)
	per := func(cs []ports.DeliveryClaim) map[string]int {
		m := map[string]int{}
		for _, c := range cs {
			m[c.Delivery.EndpointID]++
		}
		return m
	}
	first, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 4, ports.ClaimCaps{PerEndpoint: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := per(first); got[slow.ID] != 2 || got[fast.ID] != 1 {
		t.Fatalf("first claim per endpoint %v, want 2 of slow and 1 of fast", got)
	}
	// slow has 2 in flight: nothing more of it until they finish.
	if more, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 4, ports.ClaimCaps{PerEndpoint: 2}); err != nil || len(more) != 0 {
		t.Fatalf("second claim: %d, %v", len(more), err)
	}
	// Without a cap the backlog is taken in due order.
	if all, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 10, ports.ClaimCaps{}); err != nil || len(all) != 5 {
		t.Fatalf("uncapped claim: %d, %v", len(all), err)
	}
}

// A claim gives one account at most its cap of deliveries in flight and
// reaches past its backlog to another account's.
func testClaimCapsEachAccount(t *testing.T, db *store.DB) {
	ctx := context.Background()
	busy := webhookAccount(t, db)
	newEndpoint(t, db, busy, domain.EventChargeCreated)
	newEndpoint(t, db, busy, domain.EventChargeCreated)
	for range 4 {
		seedDeliveries(t, db, busy, "") // 8 deliveries, older
	}
	quiet := webhookAccount(t, db)
	newEndpoint(t, db, quiet, domain.EventChargeCreated)
	seedDeliveries(t, db, quiet, "")
	now := baseTime.Add(time.Second)
	caps := ports.ClaimCaps{PerAccount: 3}
	got := map[string]int{}
	for range 3 {
		cs, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 2, caps)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			got[c.Delivery.AccountID]++
		}
	}
	if got[busy.AccountID] != 3 || got[quiet.AccountID] != 1 {
		t.Fatalf("claimed per account %v, want 3 of the busy one and the quiet one's 1", got)
	}
}

// testRequeueAndChargeFilter: a finished delivery can be sent once more
// (one attempt, history kept), only in its scope and while its endpoint
// exists; deliveries can be listed per charge.
func testRequeueAndChargeFilter(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	e := newEndpoint(t, db, scope, domain.EventChargeCreated)
	seedDeliveries(t, db, scope, "")
	seedDeliveries(t, db, scope, "")
	all, _, _ := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, Limit: 10})
	if len(all) != 2 || all[0].ChargeID == all[1].ChargeID {
		t.Fatalf("seeded %+v", all)
	}
	one, n, err := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, ChargeID: all[1].ChargeID, Limit: 10})
	if err != nil || n != 1 || len(one) != 1 || one[0].ID != all[1].ID {
		t.Fatalf("charge filter: %d %+v %v", n, one, err)
	}

	now := baseTime.Add(time.Second)
	claims, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 10, ports.ClaimCaps{})
	if err != nil || len(claims) != 2 {
		t.Fatalf("claims %d, %v", len(claims), err)
	}
	for _, c := range claims {
		d := c.Delivery
		if err := d.RecordAttempt(domain.AttemptResult{StatusCode: 200}, domain.RetrySchedule, now, 0.5); err != nil {
			t.Fatal(err)
		}
		if err := db.CompleteDelivery(ctx, d, c.LeaseToken, false); err != nil {
			t.Fatal(err)
		}
	}
	id := claims[0].Delivery.ID
	other := ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}
	if _, err := db.RequeueDelivery(ctx, other, id, now); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("requeue from the other mode: %v", err)
	}
	later := now.Add(time.Hour)
	d, err := db.RequeueDelivery(ctx, scope, id, later)
	if err != nil || d.Status != domain.DeliveryPending || d.Attempts != 1 || d.MaxAttempts != 2 ||
		d.NextRetryAt == nil || !d.NextRetryAt.Equal(micro(later)) || d.LastStatusCode == nil || *d.LastStatusCode != 200 {
		t.Fatalf("requeued %+v, %v", d, err)
	}
	// Open already: unchanged.
	if again, err := db.RequeueDelivery(ctx, scope, id, later.Add(time.Minute)); err != nil || !again.NextRetryAt.Equal(micro(later)) {
		t.Fatalf("requeue of an open delivery: %+v, %v", again, err)
	}
	got, err := db.ClaimDeliveries(ctx, later, later.Add(time.Minute), 10, ports.ClaimCaps{})
	if err != nil || len(got) != 1 || got[0].Delivery.ID != id || got[0].Delivery.Attempts != 2 {
		t.Fatalf("claim after requeue: %+v, %v", got, err)
	}
	// A deleted endpoint's delivery stays as it is.
	if err := db.DeleteEndpoint(ctx, scope, e.ID, later); err != nil {
		t.Fatal(err)
	}
	if d, err := db.RequeueDelivery(ctx, scope, claims[1].Delivery.ID, later); err != nil || d.Status != domain.DeliveryDelivered {
		t.Fatalf("requeue for a deleted endpoint: %+v, %v", d, err)
	}
}
