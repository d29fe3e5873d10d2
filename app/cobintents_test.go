package app_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// memIntents is ports.CobIntents in a map, logging each call in order.
type memIntents struct {
	mu      sync.Mutex
	m       map[string]ports.ProviderIntent // by txid
	calls   *[]string
	failing bool
}

func (f *memIntents) RecordCobIntent(_ context.Context, ins ...ports.ProviderIntent) error {
	time.Sleep(10 * time.Millisecond) // slower than the claim: the cob must still wait for it
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.calls = append(*f.calls, "intent")
	if f.failing {
		return errors.New("redis: connection refused")
	}
	for _, in := range ins {
		in.Key.Key = "" // not kept
		f.m[in.TxID] = in
	}
	return nil
}

// StartCobIntent records in on a goroutine of its own, as Redis does
// beside the caller: the create must still wait for it before its cob.
func (f *memIntents) StartCobIntent(ctx context.Context, in ports.ProviderIntent) func() error {
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = f.RecordCobIntent(ctx, in)
	}()
	return func() error {
		<-done
		return err
	}
}

func (f *memIntents) CobIntentsBefore(_ context.Context, t time.Time, limit int) ([]ports.ProviderIntent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ports.ProviderIntent
	for _, in := range f.m {
		if in.CreatedAt.Before(t) && len(out) < limit {
			out = append(out, in)
		}
	}
	return out, nil
}

func (f *memIntents) DropCobIntent(_ context.Context, ins ...ports.ProviderIntent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.calls = append(*f.calls, "drop")
	for _, in := range ins {
		delete(f.m, in.TxID)
	}
	return nil
}

func (f *memIntents) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}

// seen reports whether call is among the calls so far.
func (f *memIntents) seen(call string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(*f.calls, call)
}

// log is the calls so far, and then forgets them.
func (f *memIntents) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := *f.calls
	*f.calls = nil
	return out
}

// createdRecords is the idempotency records the harness's store was asked
// to commit, in order.
func createdRecords(h *harness) []*ports.IdempotencyRecord {
	var out []*ports.IdempotencyRecord
	for _, c := range h.store.CreateChargeCalls() {
		out = append(out, c.Rec)
	}
	return out
}

// waitUntil waits up to 5 s for cond: intents are dropped off the
// request's path.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for %s", what)
		}
	}
}

// fastHarness is the harness with the shared cache's cob intents: every
// create whose claim the cache acquired skips the database's replay
// check. The harness's cache acquires every claim, as Redis does after a
// flush.
func fastHarness(t *testing.T) (*harness, *app.ChargeService, *memIntents) {
	t.Helper()
	h := newHarness(t)
	calls := &[]string{}
	intents := &memIntents{m: map[string]ports.ProviderIntent{}, calls: calls}
	dbIntents := h.records
	*dbIntents = mocks.IdempotencyStoreMock{
		GetIdempotencyRecordFunc:  h.records.GetIdempotencyRecordFunc,
		ProviderIntentsBeforeFunc: func(context.Context, time.Time, int) ([]ports.ProviderIntent, error) { return nil, nil },
		FindChargeByTxIDFunc:      h.findChargeByTxID,
	}
	create := h.acquirer.CreatePixChargeFunc
	h.acquirer.CreatePixChargeFunc = func(ctx context.Context, r ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
		intents.mu.Lock()
		*calls = append(*calls, "cob")
		intents.mu.Unlock()
		return create(ctx, r)
	}
	h.acquirer.CancelPixChargeFunc = func(context.Context, ports.CancelPixChargeRequest) error { return nil }
	clock := &mocks.ClockMock{NowFunc: func() time.Time { h.clockMu.Lock(); defer h.clockMu.Unlock(); return h.now }}
	svc := app.NewChargeService(h.store, exactlyonce.NewCacheFirst(dbIntents, h.cache, intents, clock, app.RandomIDs{}, discard(), exactlyonce.Config{}), h.acquirer, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{
			Links: domain.Links{CheckoutBase: "https://pay.example.com/c"}})
	return h, svc, intents
}

// A create whose claim the cache acquired asks the database nothing before
// its cob: its intent goes to the cache first, the cob has a txid of its
// own, and the committed create drops the intent.
func TestUncheckedCreateKeepsItsIntentInTheCache(t *testing.T) {
	t.Parallel()
	h, svc, intents := fastHarness(t)
	live := caller
	live.Mode = domain.ModeLive
	in := app.CreateChargeInput{Amount: 100, Methods: []domain.Method{domain.MethodPix}}
	before := time.Now()
	resp, err := svc.Create(context.Background(), live, in, app.Idempotency{Key: "fast-1", Fingerprint: "a"}, render)
	after := time.Now()
	if err != nil || resp.Replayed {
		t.Fatalf("create: %+v %v", resp, err)
	}
	if n := len(h.records.GetIdempotencyRecordCalls()); n != 0 {
		t.Fatalf("the create read the durable record %d times before its cob", n)
	}
	waitUntil(t, "the committed create's intent to go", func() bool { return intents.seen("drop") })
	if got := intents.log(); len(got) != 3 || got[0] != "intent" || got[1] != "cob" || got[2] != "drop" {
		t.Fatalf("calls %v, want the intent, the cob, then the intent dropped", got)
	}
	cob := h.acquirer.CreatePixChargeCalls()[0].Req
	if derived := domain.DeriveTxID(live.Account.ID, string(domain.ModeLive), "fast-1"); cob.TxID == derived || !domain.ValidTxID(cob.TxID) {
		t.Fatalf("txid %q: want a valid txid of the attempt's own, not the key's %q", cob.TxID, derived)
	}
	// It leads with the time it was asked for (domain.CobTxID), so the
	// charges' txid index takes it at its end.
	lo, _ := domain.NewRawIDAt(before, bytes.NewReader(make([]byte, 17)))
	hi, _ := domain.NewRawIDAt(after, bytes.NewReader(make([]byte, 17)))
	if head := cob.TxID[:9]; head < lo[:9] || head > hi[:9] {
		t.Fatalf("txid %q does not begin with the time it was asked for (%s…%s)", cob.TxID, lo[:9], hi[:9])
	}
	if id, err := h.findChargeByTxID(context.Background(), live.Scope(), cob.TxID); err != nil || id != chargeID(t, resp.Body) {
		t.Fatalf("the charge does not hold the cob's txid: %q %v", id, err)
	}
	// The intent is the cache's: the commit has none of the store's to
	// settle (no DELETE in its batch).
	if recs := createdRecords(h); len(recs) != 1 || recs[0].SettlesIntent {
		t.Fatalf("records %d, the unchecked create's settles a store intent it never recorded", len(recs))
	}

	// Refused before its cob (R$ 0.00): its intent goes at once.
	if _, err := svc.Create(context.Background(), live, app.CreateChargeInput{Amount: 0, Methods: in.Methods}, app.Idempotency{Key: "fast-0", Fingerprint: "z"}, render); err == nil {
		t.Fatal("a create of R$ 0.00 succeeded")
	}
	waitUntil(t, "the refused create's intent to go", func() bool { return intents.seen("drop") })
	if got := intents.log(); len(got) != 2 || got[0] != "intent" || got[1] != "drop" {
		t.Fatalf("refused create's calls %v, want its intent recorded and dropped, no cob", got)
	}

	// Test mode: no intent (sandbox cobs cannot be paid), no durable check.
	reads := len(h.records.GetIdempotencyRecordCalls()) // the refusal above asked whether the key was used
	if _, err := svc.Create(context.Background(), caller, in, app.Idempotency{Key: "fast-test", Fingerprint: "t"}, render); err != nil {
		t.Fatal(err)
	}
	if got := intents.log(); len(got) != 1 || got[0] != "cob" || len(h.records.GetIdempotencyRecordCalls()) != reads {
		t.Fatalf("test-mode calls %v, record reads %d", got, len(h.records.GetIdempotencyRecordCalls())-reads)
	}

	// The cache cannot take the intent: no cob is asked for, and the
	// request is refused as retryable (503), never as a 500.
	intents.mu.Lock()
	intents.failing = true
	intents.mu.Unlock()
	_, err = svc.Create(context.Background(), live, in, app.Idempotency{Key: "fast-2", Fingerprint: "b"}, render)
	if got := intents.log(); !errors.Is(err, ports.ErrStoreUnavailable) || len(got) != 1 || got[0] != "intent" {
		t.Fatalf("create without the cache's intent: %v, calls %v", err, got)
	}
}

// When the cache lost a used key's answer, a create that skipped the
// durable check still answers as the first did — the same request gets
// the original answer, another gets 409 — even when its own attempt
// fails; the cob it opened on the way is cancelled by the sweep, never the
// original's.
func TestUncheckedCreateAfterTheCacheLostTheKey(t *testing.T) {
	t.Parallel()
	h, svc, intents := fastHarness(t)
	live := caller
	live.Mode = domain.ModeLive
	in := app.CreateChargeInput{Amount: 100, Methods: []domain.Method{domain.MethodPix}}
	idem := app.Idempotency{Key: "used", Fingerprint: "a"}
	first, err := svc.Create(context.Background(), live, in, idem, render)
	if err != nil {
		t.Fatal(err)
	}
	// The harness's cache acquires every claim: as Redis after a flush.
	again, err := svc.Create(context.Background(), live, in, idem, render)
	if err != nil || !again.Replayed || string(again.Body) != string(first.Body) {
		t.Fatalf("same request: %+v %v, want the original answer replayed", again, err)
	}
	if _, err := svc.Create(context.Background(), live, app.CreateChargeInput{Amount: 999, Methods: in.Methods},
		app.Idempotency{Key: "used", Fingerprint: "other"}, render); !errors.Is(err, app.ErrIdempotencyKeyReused) {
		t.Fatalf("another request: %v, want ErrIdempotencyKeyReused", err)
	}
	// Its own attempt failing (the PSP down) changes nothing.
	h.acquirer.CreatePixChargeFunc = func(context.Context, ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
		return nil, ports.ErrAcquirerUnavailable
	}
	if r, err := svc.Create(context.Background(), live, in, idem, render); err != nil || !r.Replayed || string(r.Body) != string(first.Body) {
		t.Fatalf("same request, PSP down: %+v %v", r, err)
	}
	if _, err := svc.Create(context.Background(), live, in, app.Idempotency{Key: "never-used", Fingerprint: "n"}, render); !errors.Is(err, ports.ErrAcquirerUnavailable) {
		t.Fatalf("a new key with the PSP down: %v", err)
	}

	cobs := h.acquirer.CreatePixChargeCalls()
	if len(cobs) != 5 {
		t.Fatalf("%d cobs asked for, want 5", len(cobs))
	}
	original := cobs[0].Req.TxID
	// A committed create's intent left behind (a crash before its drop):
	// the sweep finds the charge and only forgets it.
	if err := intents.RecordCobIntent(context.Background(), ports.ProviderIntent{
		Key: ports.IdempotencyKey{Scope: live.Scope()}, TxID: original, CreatedAt: h.now}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the 4 intents of the attempts that committed nothing and the committed one's",
		func() bool { return intents.len() == 5 })
	if n, err := svc.SweepOrphanCobs(context.Background()); err != nil || n != 0 {
		t.Fatalf("early sweep: %d %v", n, err)
	}
	h.advance(app.OrphanCobAge + time.Second)
	// The PSP unreachable: every intent is kept for the next sweep.
	h.acquirer.CancelPixChargeFunc = func(context.Context, ports.CancelPixChargeRequest) error { return ports.ErrAcquirerUnavailable }
	if n, err := svc.SweepOrphanCobs(context.Background()); err != nil || n != 1 || intents.len() != 4 {
		t.Fatalf("sweep with the PSP down: %d %v, %d intents left", n, err, intents.len())
	}
	h.acquirer.CancelPixChargeFunc = func(context.Context, ports.CancelPixChargeRequest) error { return nil }
	if n, err := svc.SweepOrphanCobs(context.Background()); err != nil || n != 4 || intents.len() != 0 {
		t.Fatalf("sweep: %d %v, %d intents left", n, err, intents.len())
	}
	cancelled := map[string]bool{}
	for _, c := range h.acquirer.CancelPixChargeCalls() {
		cancelled[c.Req.TxID] = true
	}
	if cancelled[original] {
		t.Fatal("the sweep cancelled the committed charge's cob")
	}
	for _, c := range cobs[1:] {
		if !cancelled[c.Req.TxID] {
			t.Fatalf("the cob %s of an attempt that committed nothing was not cancelled", c.Req.TxID)
		}
	}
}
