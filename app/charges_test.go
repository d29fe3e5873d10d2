package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func TestCreateWritesChargeEventsAndRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp, err := h.create(t, app.CreateChargeInput{Amount: 1990}, "key-00000001")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || resp.Replayed {
		t.Fatalf("got %d replayed=%v", resp.StatusCode, resp.Replayed)
	}
	id := chargeID(t, resp.Body)
	if got := h.charges[id].Status(); got != domain.TxWaitingPayment {
		t.Errorf("status %s, want WAITING_PAYMENT", got)
	}
	var types []domain.EventType
	for _, e := range h.events {
		types = append(types, e.Type)
	}
	if len(types) != 2 || types[0] != domain.EventChargeCreated || types[1] != domain.EventPaymentCreated {
		t.Errorf("events %v", types)
	}
	calls := h.acquirer.CreatePixChargeCalls()
	if len(calls) != 1 || calls[0].Req.TxID != domain.DeriveTxID("acct_1", "test", "key-00000001") {
		t.Errorf("acquirer calls %+v", calls)
	}
	// The cache is told the key is answered, not the answer: the
	// durable record holds it. The mark goes off the request's path.
	h.svc.WaitBackground()
	done := h.cache.CompleteInRecordCalls()
	if len(done) != 1 || len(done[0].Answered) != 1 || done[0].Answered[0].StatusCode != 201 ||
		done[0].Answered[0].Key != "idem:acct_1:test:key-00000001" ||
		len(h.cache.CompleteCalls()) != 0 || len(h.cache.ReleaseCalls()) != 0 {
		t.Errorf("cache: %d completes in the record, %d with the answer, %d releases", len(done), len(h.cache.CompleteCalls()), len(h.cache.ReleaseCalls()))
	}
	// One log line says so: which charge, how much, in which mode.
	var line struct {
		Level, Msg, Charge, Mode string
		Amount                   int64
	}
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, `"charge created"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line.Level != "INFO" || line.Charge != "ch_"+id || line.Amount != 1990 || line.Mode != "test" {
		t.Errorf("the create's log line: %+v, in %s", line, h.logs.String())
	}
}

func TestCreateIdempotency(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		claim    ports.Claim
		claimErr error
		// seed writes a durable record before the call.
		seed        bool
		seedFP      string
		wantErr     error
		wantReplay  bool
		wantBody    string // when set, the answer's body
		wantAcquire int
	}{
		{name: "cache replay", claim: ports.Claim{State: ports.ClaimCompleted, Fingerprint: "fp-k", StatusCode: 201, Body: []byte(`{"id":"x"}`)}, wantReplay: true},
		{name: "cache replay from the record", claim: ports.Claim{State: ports.ClaimCompleted, Fingerprint: "fp-k", StatusCode: 201, InRecord: true},
			seed: true, seedFP: "fp-k", wantReplay: true, wantBody: `{"seeded":true}`},
		{name: "cache conflict, answer in the record", claim: ports.Claim{State: ports.ClaimCompleted, Fingerprint: "other", StatusCode: 201, InRecord: true},
			seed: true, seedFP: "other", wantErr: app.ErrIdempotencyKeyReused},
		// A record missing after all (a database restored from before it):
		// the key goes the database's way, as with a lost claim.
		{name: "cache answered, the record missing", claim: ports.Claim{State: ports.ClaimCompleted, Fingerprint: "fp-k", StatusCode: 201, InRecord: true}, wantAcquire: 1},
		{name: "cache conflict", claim: ports.Claim{State: ports.ClaimCompleted, Fingerprint: "other", StatusCode: 201}, wantErr: app.ErrIdempotencyKeyReused},
		{name: "in flight", claim: ports.Claim{State: ports.ClaimInFlight, Fingerprint: "fp-k"}, wantErr: app.ErrIdempotencyKeyInUse},
		// The holder answered and its mark has not landed yet (it is set
		// off the request's path): the record answers.
		{name: "in flight, answered in the record", claim: ports.Claim{State: ports.ClaimInFlight, Fingerprint: "fp-k"},
			seed: true, seedFP: "fp-k", wantReplay: true, wantBody: `{"seeded":true}`},
		{name: "in flight other body", claim: ports.Claim{State: ports.ClaimInFlight, Fingerprint: "other"}, wantErr: app.ErrIdempotencyKeyReused},
		{name: "cache flushed, durable replay", claim: ports.Claim{State: ports.ClaimAcquired}, seed: true, seedFP: "fp-k", wantReplay: true},
		{name: "cache flushed, durable conflict", claim: ports.Claim{State: ports.ClaimAcquired}, seed: true, seedFP: "other", wantErr: app.ErrIdempotencyKeyReused},
		{name: "cache down, durable replay", claimErr: errors.New("redis down"), seed: true, seedFP: "fp-k", wantReplay: true},
		{name: "cache down, fresh create", claimErr: errors.New("redis down"), wantAcquire: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.cache.BeginFunc = func(context.Context, string, string, time.Duration) (ports.Claim, error) {
				return tc.claim, tc.claimErr
			}
			if tc.seed {
				k := ports.IdempotencyKey{Scope: caller.Scope(), Key: "k"}
				h.recs[k] = ports.IdempotencyRecord{IdempotencyKey: k, Fingerprint: tc.seedFP, StatusCode: 201, Body: []byte(`{"seeded":true}`)}
			}
			resp, err := h.create(t, app.CreateChargeInput{Amount: 100}, "k")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if resp.Replayed != tc.wantReplay {
				t.Errorf("replayed = %v, want %v", resp.Replayed, tc.wantReplay)
			}
			if tc.wantBody != "" && string(resp.Body) != tc.wantBody {
				t.Errorf("body %s, want %s", resp.Body, tc.wantBody)
			}
			if n := len(h.acquirer.CreatePixChargeCalls()); n != tc.wantAcquire {
				t.Errorf("acquirer called %d times, want %d", n, tc.wantAcquire)
			}
			if tc.claim.State == ports.ClaimAcquired && tc.wantErr != nil && len(h.cache.ReleaseCalls()) != 1 {
				t.Errorf("an acquired claim that failed was not released")
			}
		})
	}
}

func TestCreateLosesRaceToAnotherProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Another process commits the same key between our durable check and
	// our insert: the store refuses ours and we answer with theirs.
	k := ports.IdempotencyKey{Scope: caller.Scope(), Key: "race-key-1"}
	inner := h.store.CreateChargeFunc
	h.store.CreateChargeFunc = func(ctx context.Context, c *domain.Charge, evs []domain.Event, rec *ports.IdempotencyRecord) error {
		h.mu.Lock()
		h.recs[k] = ports.IdempotencyRecord{IdempotencyKey: k, Fingerprint: "fp-race-key-1", StatusCode: 201, Body: []byte(`{"winner":true}`)}
		h.mu.Unlock()
		return inner(ctx, c, evs, rec)
	}
	resp, err := h.create(t, app.CreateChargeInput{Amount: 100}, "race-key-1")
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Replayed || string(resp.Body) != `{"winner":true}` {
		t.Fatalf("got %s replayed=%v, want the winner's body", resp.Body, resp.Replayed)
	}
	if len(h.charges) != 0 {
		t.Fatalf("%d charges stored, want 0 from this call", len(h.charges))
	}
}

func TestCreateAcquirerDownReleasesKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.acquirer.CreatePixChargeFunc = func(context.Context, ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
		return nil, ports.ErrAcquirerUnavailable
	}
	_, err := h.create(t, app.CreateChargeInput{Amount: 100}, "down-key-1")
	if !errors.Is(err, ports.ErrAcquirerUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if len(h.cache.ReleaseCalls()) != 1 || len(h.store.CreateChargeCalls()) != 0 {
		t.Fatalf("want the claim released and nothing stored")
	}
}

func TestCreateValidationStoresNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.create(t, app.CreateChargeInput{Amount: 100, ExpectedPayer: "52998224725"}, "val-key-1")
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Field != domain.FieldCustomerName {
		t.Fatalf("err = %v, want customer.name validation", err)
	}
	if len(h.acquirer.CreatePixChargeCalls()) != 0 || len(h.store.CreateChargeCalls()) != 0 {
		t.Fatal("a rejected request reached the acquirer or the store")
	}
}

// The marks of concurrent creates go to the cache together, off the
// requests' path; a mark the cache refuses is logged, not retried, and
// releases nothing: the answers stand, and a retry reads the record.
func TestCreateMarksAnsweredKeysTogether(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var mu sync.Mutex
	var calls, marked int
	gate := make(chan struct{})
	h.cache.CompleteInRecordFunc = func(_ context.Context, _ time.Duration, answered ...ports.Answered) error {
		<-gate // the first mark waits, so the others queue behind it
		mu.Lock()
		defer mu.Unlock()
		calls++
		marked += len(answered)
		return errors.New("redis: connection refused")
	}
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			resp, err := h.create(t, app.CreateChargeInput{Amount: 100}, fmt.Sprintf("batch-key-%04d", i))
			if err == nil && resp.StatusCode != 201 {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			errs <- err
		})
	}
	answered := make(chan struct{})
	go func() { wg.Wait(); close(answered) }()
	select {
	case <-answered: // every create answered while the first mark was still held
	case <-time.After(10 * time.Second):
		close(gate)
		t.Fatal("the creates waited for their marks")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	h.svc.WaitBackground()
	mu.Lock()
	defer mu.Unlock()
	if marked != n || calls >= n {
		t.Errorf("%d keys marked in %d calls; want all %d in fewer calls", marked, calls, n)
	}
	if len(h.cache.ReleaseCalls()) != 0 {
		t.Errorf("%d releases after failed marks; want none (the records answer)", len(h.cache.ReleaseCalls()))
	}
	if !strings.Contains(h.logs.String(), "mark idempotency keys answered") {
		t.Errorf("the failed mark was not logged: %s", h.logs.String())
	}
}
