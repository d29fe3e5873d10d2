package app_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

type seqIDs struct{ n atomic.Int64 }

func (s *seqIDs) NewID() (string, error) {
	return "id" + strconv.FormatInt(s.n.Add(1), 10), nil
}

var webhookNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newWebhookService(store ports.WebhookStore, outbox ports.WebhookOutbox, sender ports.WebhookSender, guard ports.URLGuard) *app.WebhookService {
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return webhookNow }}
	return app.NewWebhookService(store, outbox, sender, guard, clock, &seqIDs{},
		nil, app.WebhooksConfig{Jitter: func() float64 { return 0.5 }})
}

// Fan-out: one delivery per subscribed ACTIVE endpoint of the event's own
// account and mode, plus the webhookUrl for legacy events only.
func TestDispatchFanOut(t *testing.T) {
	t.Parallel()
	live := ports.Scope{AccountID: "acct_a", Mode: domain.ModeLive}
	test := ports.Scope{AccountID: "acct_a", Mode: domain.ModeTest}
	ep := func(id string, s ports.Scope, status domain.EndpointStatus, evs ...domain.EventType) domain.WebhookEndpoint {
		return domain.WebhookEndpoint{ID: id, AccountID: s.AccountID, Mode: s.Mode, Status: status, Events: evs}
	}
	batch := ports.OutboxBatch{
		Events: []ports.OutboxEvent{
			{Event: domain.Event{ID: "evt_1", Type: domain.EventChargePaid, AccountID: "acct_a", Mode: domain.ModeLive}, WebhookURL: "https://m.example.com/tx"},
			{Event: domain.Event{ID: "evt_2", Type: domain.EventPaymentCompleted, AccountID: "acct_a", Mode: domain.ModeLive}, WebhookURL: "https://m.example.com/tx"},
			{Event: domain.Event{ID: "evt_3", Type: domain.EventChargePaid, AccountID: "acct_a", Mode: domain.ModeTest}},
		},
		Endpoints: map[ports.Scope][]domain.WebhookEndpoint{
			live: {
				ep("we_paid", live, domain.EndpointActive, domain.EventChargePaid),
				ep("we_both", live, domain.EndpointActive, domain.EventChargePaid, domain.EventPaymentCompleted),
				ep("we_off", live, domain.EndpointInactive, domain.EventChargePaid),
			},
			test: {ep("we_test", test, domain.EndpointActive, domain.EventPaymentCompleted)},
		},
	}
	var got []domain.WebhookDelivery
	outbox := &mocks.WebhookOutboxMock{DispatchEventsFunc: func(_ context.Context, _ int, fan func(ports.OutboxBatch) ([]domain.WebhookDelivery, error)) (int, error) {
		ds, err := fan(batch)
		got = ds
		return len(batch.Events), err
	}}
	svc := newWebhookService(&mocks.WebhookStoreMock{}, outbox, &mocks.WebhookSenderMock{}, &mocks.URLGuardMock{})
	if n, err := svc.DispatchOnce(t.Context()); n != 3 || err != nil {
		t.Fatalf("dispatch: %d, %v", n, err)
	}
	want := map[string]bool{"evt_1>we_paid": true, "evt_1>we_both": true, "evt_2>we_both": true, "evt_2>https://m.example.com/tx": true}
	if len(got) != len(want) {
		t.Fatalf("%d deliveries, want %d: %+v", len(got), len(want), got)
	}
	for _, d := range got {
		target := d.EndpointID
		if target == "" {
			target = d.URL
		}
		if !want[d.EventID+">"+target] || d.Status != domain.DeliveryPending || d.NextRetryAt == nil || d.MaxAttempts != 15 {
			t.Fatalf("unexpected delivery %+v", d)
		}
	}
}

// An attempt signs with the claim's secret, records the outcome under its
// lease, and a 410 asks the store to deactivate the endpoint.
func TestDeliverRecordsOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		res      domain.AttemptResult
		sendErr  error
		status   domain.DeliveryStatus
		gone     bool
		complete bool
	}{
		{"delivered", domain.AttemptResult{StatusCode: 200}, nil, domain.DeliveryDelivered, false, true},
		{"retry", domain.AttemptResult{StatusCode: 500}, nil, domain.DeliveryPending, false, true},
		{"gone", domain.AttemptResult{StatusCode: 410}, nil, domain.DeliveryCancelled, true, true},
		{"worker dies", domain.AttemptResult{}, context.Canceled, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := domain.NewWebhookDelivery("wd_1", domain.Event{ID: "evt_1", Type: domain.EventChargePaid, Payload: []byte(`{"a":1}`)}, "we_1", "", webhookNow)
			d.Status, d.Attempts = domain.DeliveryProcessing, 1
			var saved *domain.WebhookDelivery
			var savedGone bool
			store := &mocks.WebhookStoreMock{
				ClaimDeliveriesFunc: func(_ context.Context, now, until time.Time, _ int, _ ports.ClaimCaps) ([]ports.DeliveryClaim, error) {
					if !until.Equal(now.Add(30 * time.Second)) {
						t.Errorf("lease until %v", until)
					}
					return []ports.DeliveryClaim{{Delivery: d, URL: "https://m.example.com/h", Secret: "sec", LeaseToken: "tok"}}, nil
				},
				CompleteDeliveryFunc: func(_ context.Context, got domain.WebhookDelivery, token string, gone bool) error {
					if token != "tok" {
						t.Errorf("token %q", token)
					}
					saved, savedGone = &got, gone
					return nil
				},
			}
			sender := &mocks.WebhookSenderMock{SendFunc: func(_ context.Context, r ports.WebhookRequest) (domain.AttemptResult, error) {
				if err := domain.VerifyWebhook(r.Signature, r.Body, webhookNow, "sec"); err != nil {
					t.Errorf("signature: %v", err)
				}
				if r.DeliveryID != "wd_1-1" || r.EventType != domain.EventChargePaid {
					t.Errorf("request %+v", r)
				}
				return tt.res, tt.sendErr
			}}
			svc := newWebhookService(store, &mocks.WebhookOutboxMock{}, sender, &mocks.URLGuardMock{})
			if n, err := svc.DeliverOnce(t.Context()); n != 1 || err != nil {
				t.Fatalf("deliver: %d, %v", n, err)
			}
			if !tt.complete {
				if saved != nil {
					t.Fatal("a dead worker's attempt was recorded")
				}
				return
			}
			if saved == nil || saved.Status != tt.status || savedGone != tt.gone {
				t.Fatalf("saved %+v gone=%v", saved, savedGone)
			}
		})
	}
}

func TestCreateEndpointValidates(t *testing.T) {
	t.Parallel()
	guard := &mocks.URLGuardMock{CheckURLFunc: func(_ context.Context, mode domain.Mode, u string) error {
		if u == "https://10.0.0.1/" {
			return ports.ErrURLForbidden
		}
		return nil
	}}
	store := &mocks.WebhookStoreMock{
		CreateEndpointFunc: func(context.Context, domain.WebhookEndpoint) error { return nil },
		ListEndpointsFunc:  func(context.Context, ports.Scope) ([]domain.WebhookEndpoint, error) { return nil, nil },
	}
	svc := newWebhookService(store, &mocks.WebhookOutboxMock{}, &mocks.WebhookSenderMock{}, guard)
	caller := app.Caller{Account: domain.Account{ID: "acct_a"}, Mode: domain.ModeLive}
	if _, err := svc.CreateEndpoint(t.Context(), caller, app.EndpointInput{URL: "https://10.0.0.1/", Events: []string{"charge.paid"}}); !errors.Is(err, ports.ErrURLForbidden) {
		t.Fatalf("forbidden url: %v", err)
	}
	if _, err := svc.CreateEndpoint(t.Context(), caller, app.EndpointInput{URL: "https://ok.example.com/", Events: []string{"charge.bogus"}}); !errors.Is(err, domain.ErrValidation) {
		t.Fatalf("unknown event: %v", err)
	}
	if len(store.CreateEndpointCalls()) != 0 {
		t.Fatal("invalid endpoint stored")
	}
	e, err := svc.CreateEndpoint(t.Context(), caller, app.EndpointInput{URL: "https://ok.example.com/", Events: []string{"charge.paid"}})
	if err != nil || e.Status != domain.EndpointActive || len(e.Secret) != 64 || e.Mode != domain.ModeLive || e.ID != "we_id1" {
		t.Fatalf("create: %+v, %v", e, err)
	}
	if len(store.CreateEndpointCalls()) != 1 || store.CreateEndpointCalls()[0].E.Secret != e.Secret {
		t.Fatal("endpoint not stored with its secret")
	}
}

// An attempt's outcome that cannot be saved because the database is out
// for a moment is saved again once it is back, well within the lease: the
// delivery does not stay PROCESSING (holding its endpoint's place in the
// per-endpoint cap) until the lease ends.
func TestDeliverSavesTheOutcomeAfterADatabaseBlip(t *testing.T) {
	t.Parallel()
	d := domain.NewWebhookDelivery("wd_1", domain.Event{ID: "evt_1", Type: domain.EventChargePaid, Payload: []byte(`{"a":1}`)}, "we_1", "", webhookNow)
	d.Status, d.Attempts = domain.DeliveryProcessing, 1
	var (
		mu    sync.Mutex
		tries int
		saved *domain.WebhookDelivery
	)
	store := &mocks.WebhookStoreMock{
		ClaimDeliveriesFunc: func(context.Context, time.Time, time.Time, int, ports.ClaimCaps) ([]ports.DeliveryClaim, error) {
			return []ports.DeliveryClaim{{Delivery: d, URL: "https://m.example.com/h", Secret: "sec", LeaseToken: "tok"}}, nil
		},
		CompleteDeliveryFunc: func(_ context.Context, got domain.WebhookDelivery, _ string, _ bool) error {
			mu.Lock()
			defer mu.Unlock()
			if tries++; tries <= 2 {
				return fmt.Errorf("%w: terminating connection due to administrator command", ports.ErrStoreUnavailable)
			}
			saved = &got
			return nil
		},
	}
	sender := &mocks.WebhookSenderMock{SendFunc: func(context.Context, ports.WebhookRequest) (domain.AttemptResult, error) {
		return domain.AttemptResult{StatusCode: 200}, nil
	}}
	svc := newWebhookService(store, &mocks.WebhookOutboxMock{}, sender, &mocks.URLGuardMock{})
	if n, err := svc.DeliverOnce(t.Context()); n != 1 || err != nil {
		t.Fatalf("deliver: %d, %v", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if tries != 3 || saved == nil || saved.Status != domain.DeliveryDelivered {
		t.Fatalf("%d saves, saved %+v; want the third to record DELIVERED", tries, saved)
	}
}

// Woken by commits, the dispatcher runs at most once per DispatchGap, so
// under load one pass fans out many commits' events; and only a pass that
// made deliveries wakes the delivery loops (a dispatch of events nobody
// subscribes to sends no delivery loop to the database).
func TestDispatcherBatchesCommitsAndWakesDeliveryOnlyForDeliveries(t *testing.T) {
	t.Parallel()
	var passes, claims atomic.Int64
	var subscribed atomic.Bool
	outbox := &mocks.WebhookOutboxMock{DispatchEventsFunc: func(_ context.Context, _ int, fan func(ports.OutboxBatch) ([]domain.WebhookDelivery, error)) (int, error) {
		passes.Add(1)
		scope := ports.Scope{AccountID: "acct_a", Mode: domain.ModeLive}
		b := ports.OutboxBatch{Events: []ports.OutboxEvent{{Event: domain.Event{ID: "evt_1", Type: domain.EventChargePaid, AccountID: scope.AccountID, Mode: scope.Mode}}}}
		if subscribed.Load() {
			b.Endpoints = map[ports.Scope][]domain.WebhookEndpoint{scope: {{ID: "we_1", AccountID: scope.AccountID, Mode: scope.Mode,
				Status: domain.EndpointActive, Events: []domain.EventType{domain.EventChargePaid}}}}
		}
		_, err := fan(b)
		return 1, err
	}}
	store := &mocks.WebhookStoreMock{ClaimDeliveriesFunc: func(context.Context, time.Time, time.Time, int, ports.ClaimCaps) ([]ports.DeliveryClaim, error) {
		claims.Add(1)
		return nil, nil
	}}
	committed := make(chan struct{})
	const gap = 100 * time.Millisecond
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return webhookNow }}
	svc := app.NewWebhookService(store, outbox, &mocks.WebhookSenderMock{}, &mocks.URLGuardMock{}, clock, &seqIDs{}, nil,
		app.WebhooksConfig{Workers: 2, EventsCommitted: committed, DispatchGap: gap, IdlePoll: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// A commit signal every millisecond for half a second.
	start := time.Now()
	for time.Since(start) < 500*time.Millisecond {
		select {
		case committed <- struct{}{}:
		default:
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	if max := int64(elapsed/gap) + 2; passes.Load() > max {
		t.Errorf("%d dispatch passes in %v, want at most %d (one per %v)", passes.Load(), elapsed, max, gap)
	}
	if passes.Load() < 2 {
		t.Errorf("%d dispatch passes: the signals did not wake the dispatcher", passes.Load())
	}
	// Each delivery loop ticked once when it started; nothing since.
	if got := claims.Load(); got != 2 {
		t.Errorf("delivery loops claimed %d times after dispatches that made no deliveries, want 2 (their first ticks)", got)
	}

	// A dispatch that makes a delivery wakes a delivery loop.
	subscribed.Store(true)
	committed <- struct{}{}
	for deadline := time.Now().Add(5 * time.Second); claims.Load() == 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a dispatch that made a delivery did not wake a delivery loop")
		}
	}
}
