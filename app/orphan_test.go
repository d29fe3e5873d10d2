package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// security.md, item 10: a live create records its cob before calling the
// acquirer; when no charge holding its txid commits, the sweep cancels that
// cob, and when one did, the sweep only forgets the intent.
func TestOrphanCobIsCancelled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var (
		mu      sync.Mutex
		intents = map[ports.IdempotencyKey]ports.ProviderIntent{}
		order   []string
	)
	store := &mocks.IdempotencyStoreMock{
		GetIdempotencyRecordFunc: h.records.GetIdempotencyRecordFunc,
		RecordProviderIntentFunc: func(_ context.Context, in ports.ProviderIntent) error {
			mu.Lock()
			defer mu.Unlock()
			intents[in.Key] = in
			order = append(order, "intent")
			return nil
		},
		ProviderIntentsBeforeFunc: func(_ context.Context, before time.Time, _ int) ([]ports.ProviderIntent, error) {
			mu.Lock()
			defer mu.Unlock()
			var out []ports.ProviderIntent
			for _, in := range intents {
				if in.CreatedAt.Before(before) {
					out = append(out, in)
				}
			}
			return out, nil
		},
		DeleteProviderIntentFunc: func(_ context.Context, k ports.IdempotencyKey) error {
			mu.Lock()
			defer mu.Unlock()
			delete(intents, k)
			return nil
		},
		FindChargeByTxIDFunc: h.findChargeByTxID,
	}
	store.IdempotencyRecordOrIntentFunc = func(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
		rec, err := h.records.GetIdempotencyRecord(ctx, in.Key)
		if !errors.Is(err, ports.ErrNotFound) {
			return rec, err
		}
		mu.Lock()
		order = append(order, "replay+intent")
		mu.Unlock()
		return nil, errors.Join(store.RecordProviderIntent(ctx, in), ports.ErrNotFound)
	}
	create := h.acquirer.CreatePixChargeFunc
	h.acquirer.CreatePixChargeFunc = func(ctx context.Context, r ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
		mu.Lock()
		order = append(order, "cob")
		mu.Unlock()
		return create(ctx, r)
	}
	h.acquirer.CancelPixChargeFunc = func(context.Context, ports.CancelPixChargeRequest) error { return nil }
	insert := h.store.CreateChargeFunc
	h.store.CreateChargeFunc = func(ctx context.Context, c *domain.Charge, evs []domain.Event, rec *ports.IdempotencyRecord) error {
		if rec.Key == "insert-fails" {
			return errors.New("connection lost")
		}
		return insert(ctx, c, evs, rec)
	}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { h.clockMu.Lock(); defer h.clockMu.Unlock(); return h.now }}
	svc := app.NewChargeService(h.store, checked(store, h.cache, clock), h.acquirer, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{
			Links: domain.Links{CheckoutBase: "https://pay.example.com/c"}})
	live := caller
	live.Mode = domain.ModeLive
	in := app.CreateChargeInput{Amount: 100, Methods: []domain.Method{domain.MethodPix}}
	if _, err := svc.Create(context.Background(), live, in, app.Idempotency{Key: "insert-fails", Fingerprint: "a"}, render); err == nil {
		t.Fatal("the failing insert succeeded")
	}
	if _, err := svc.Create(context.Background(), live, in, app.Idempotency{Key: "committed", Fingerprint: "b"}, render); err != nil {
		t.Fatal(err)
	}
	if len(order) != 6 || order[0] != "replay+intent" || order[1] != "intent" || order[2] != "cob" {
		t.Fatalf("calls %v: the intent must be written, with the replay check, before the cob", order)
	}
	// Its intent is the store's: the create's commit settles it.
	if recs := createdRecords(h); len(recs) != 2 || !recs[1].SettlesIntent {
		t.Fatalf("records %d, the committed create's does not settle the intent the replay check recorded", len(recs))
	}
	// A live create refused before any cob exists leaves no intent.
	if _, err := svc.Create(context.Background(), live, app.CreateChargeInput{Amount: 0, Methods: in.Methods},
		app.Idempotency{Key: "refused", Fingerprint: "r"}, render); err == nil {
		t.Fatal("a create of R$ 0.00 succeeded")
	}
	if _, left := intents[ports.IdempotencyKey{Scope: live.Scope(), Key: "refused"}]; left || len(h.acquirer.CreatePixChargeCalls()) != 2 {
		t.Fatalf("refused create: intent left %v, cobs asked %d", left, len(h.acquirer.CreatePixChargeCalls()))
	}
	// Too young: nothing happens.
	if n, err := svc.SweepOrphanCobs(context.Background()); err != nil || n != 0 {
		t.Fatalf("early sweep: %d, %v", n, err)
	}
	h.advance(app.OrphanCobAge + time.Second)
	if n, err := svc.SweepOrphanCobs(context.Background()); err != nil || n != 2 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	cancels := h.acquirer.CancelPixChargeCalls()
	want := domain.DeriveTxID(live.Account.ID, string(domain.ModeLive), "insert-fails")
	if len(cancels) != 1 || cancels[0].Req.TxID != want || cancels[0].Req.Scope != live.Scope() {
		t.Fatalf("cancelled %+v, want only the orphan's cob %s", cancels, want)
	}
	if len(intents) != 0 {
		t.Fatalf("intents left: %v", intents)
	}
	// Test mode records nothing: its sandbox cobs cannot be paid by anyone.
	if _, err := svc.Create(context.Background(), caller, in, app.Idempotency{Key: "test-mode", Fingerprint: "c"}, render); err != nil || len(intents) != 0 {
		t.Fatalf("test-mode create: %v, intents %d", err, len(intents))
	}
}
