package app_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// A create's webhookUrl is checked by the URL guard (it resolves DNS)
// only on a first create, inside the idempotent run: a replay of a
// completed key never asks the guard, and a refused URL stops the create
// before the cob, the charge, and with its intent removed.
func TestCreateChecksWebhookURLOnlyOnAFirstCreate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var (
		mu      sync.Mutex
		refuse  bool
		intents = map[ports.IdempotencyKey]bool{}
	)
	guard := &mocks.URLGuardMock{CheckURLFunc: func(context.Context, domain.Mode, string) error {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return fmt.Errorf("%w: hooks.merchant.example resolves to a non-public address", ports.ErrURLForbidden)
		}
		return nil
	}}
	store := &mocks.IdempotencyStoreMock{
		GetIdempotencyRecordFunc: h.records.GetIdempotencyRecordFunc,
		DeleteProviderIntentFunc: func(_ context.Context, k ports.IdempotencyKey) error {
			mu.Lock()
			defer mu.Unlock()
			delete(intents, k)
			return nil
		},
	}
	store.IdempotencyRecordOrIntentFunc = func(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
		rec, err := h.records.GetIdempotencyRecord(ctx, in.Key)
		if !errors.Is(err, ports.ErrNotFound) {
			return rec, err
		}
		mu.Lock()
		intents[in.Key] = true
		mu.Unlock()
		return nil, ports.ErrNotFound
	}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}
	svc := app.NewChargeService(h.store, checked(store, h.cache, clock), h.acquirer, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{
			Links: domain.Links{CheckoutBase: "https://pay.example.com/c"}, WebhookURLs: guard})
	live := caller
	live.Mode = domain.ModeLive
	in := app.CreateChargeInput{Amount: 2500, Methods: []domain.Method{domain.MethodPix}, WebhookURL: "https://hooks.merchant.example/tx"}
	idem := app.Idempotency{Key: "webhook-url-0001", Fingerprint: "fp-1"}

	first, err := svc.Create(context.Background(), live, in, idem, render)
	if err != nil {
		t.Fatal(err)
	}
	if calls := guard.CheckURLCalls(); len(calls) != 1 || calls[0].Mode != domain.ModeLive || calls[0].RawURL != in.WebhookURL {
		t.Fatalf("guard calls %+v, want one for the live URL", calls)
	}

	mu.Lock()
	refuse = true
	mu.Unlock()
	again, err := svc.Create(context.Background(), live, in, idem, render)
	if err != nil || !again.Replayed || again.StatusCode != first.StatusCode || string(again.Body) != string(first.Body) {
		t.Fatalf("replay: %+v %v, want the original answer replayed", again, err)
	}
	if n := len(guard.CheckURLCalls()); n != 1 {
		t.Fatalf("the replay asked the guard (%d calls in all)", n)
	}

	refused := app.Idempotency{Key: "webhook-url-0002", Fingerprint: "fp-2"}
	if _, err := svc.Create(context.Background(), live, in, refused, render); !errors.Is(err, ports.ErrURLForbidden) {
		t.Fatalf("first create with a refused URL: %v, want ErrURLForbidden", err)
	}
	if c, p := len(h.store.CreateChargeCalls()), len(h.acquirer.CreatePixChargeCalls()); c != 1 || p != 1 {
		t.Errorf("after the refusal: %d charges written, %d cobs asked, want 1 and 1", c, p)
	}
	mu.Lock()
	left := intents[ports.IdempotencyKey{Scope: live.Scope(), Key: refused.Key}]
	mu.Unlock()
	if left {
		t.Error("the refused create left its cob intent behind")
	}
}
