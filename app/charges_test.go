package app_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// harness wires a ChargeService over moq mocks whose store keeps charges
// in a map, so tests can assert both results and recorded calls.
type harness struct {
	svc      *app.ChargeService
	store    *mocks.ChargeStoreMock
	records  *mocks.IdempotencyRecordsMock
	cache    *mocks.IdempotencyCacheMock
	acquirer *mocks.AcquirerMock
	clockMu  sync.Mutex
	now      time.Time

	mu      sync.Mutex
	charges map[string]*domain.Charge
	events  []domain.Event
	recs    map[ports.IdempotencyKey]ports.IdempotencyRecord
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newGuardedHarness(t, nil)
}

// newGuardedHarness is newHarness with a fraud guard in front of Create.
func newGuardedHarness(t *testing.T, guard *app.FraudGuard) *harness {
	t.Helper()
	h := &harness{now: t0, charges: map[string]*domain.Charge{}, recs: map[ports.IdempotencyKey]ports.IdempotencyRecord{}}
	h.store = &mocks.ChargeStoreMock{
		CreateChargeFunc: func(_ context.Context, c *domain.Charge, evs []domain.Event, rec *ports.IdempotencyRecord) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			if _, ok := h.recs[rec.IdempotencyKey]; ok {
				return ports.ErrIdempotencyKeyExists
			}
			h.recs[rec.IdempotencyKey] = *rec
			h.charges[c.ID()] = domain.UnmarshalChargeFromStorage(c.Snapshot())
			h.events = append(h.events, evs...)
			return nil
		},
		GetChargeFunc: func(_ context.Context, s ports.Scope, id string) (*domain.Charge, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			c, ok := h.charges[id]
			if !ok || c.AccountID() != s.AccountID || c.Mode() != s.Mode {
				return nil, ports.ErrNotFound
			}
			return domain.UnmarshalChargeFromStorage(c.Snapshot()), nil
		},
		UpdateChargeFunc: func(ctx context.Context, s ports.Scope, id string, fn ports.ChargeChangeFunc) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			c, ok := h.charges[id]
			if !ok || c.AccountID() != s.AccountID || c.Mode() != s.Mode {
				return ports.ErrNotFound
			}
			work := domain.UnmarshalChargeFromStorage(c.Snapshot())
			change, err := fn(ctx, work, nil)
			if err != nil {
				return err
			}
			h.charges[id] = work
			h.events = append(h.events, change.Events...)
			return nil
		},
	}
	h.records = &mocks.IdempotencyRecordsMock{
		GetIdempotencyRecordFunc: func(_ context.Context, k ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			r, ok := h.recs[k]
			if !ok {
				return nil, ports.ErrNotFound
			}
			return &r, nil
		},
	}
	h.cache = &mocks.IdempotencyCacheMock{
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{State: ports.ClaimAcquired}, nil
		},
		CompleteFunc: func(context.Context, string, string, int, []byte, time.Duration) error { return nil },
		ReleaseFunc:  func(context.Context, string, string) error { return nil },
	}
	h.acquirer = &mocks.AcquirerMock{
		NameFunc: func() string { return "mock" },
		CreatePixChargeFunc: func(_ context.Context, r ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
			code, err := brcode.NewDynamic("pix.example.com/"+r.TxID, r.MerchantName, r.MerchantCity)
			if err != nil {
				return nil, err
			}
			return &ports.CreatePixChargeResponse{BRCode: code, TxID: r.TxID, Location: "pix.example.com/" + r.TxID, ExpiresAt: r.ExpiresAt, ProviderRef: r.TxID}, nil
		},
		ReturnPixFunc: func(_ context.Context, r ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
			return &ports.ReturnPixResponse{ProviderRef: r.ReturnID, Status: "DEVOLVIDO"}, nil
		},
	}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { h.clockMu.Lock(); defer h.clockMu.Unlock(); return h.now }}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }}
	h.svc = app.NewChargeService(h.store, h.records, h.cache, h.acquirer, guard, clock, ids,
		slog.New(slog.NewTextHandler(io.Discard, nil)), app.ChargesConfig{
			Links: domain.Links{CheckoutBase: "https://pay.example.com/c"},
			Fees:  map[domain.Method]domain.FeeSchedule{domain.MethodPix: {Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}}},
		})
	return h
}

func (h *harness) advance(d time.Duration) {
	h.clockMu.Lock()
	h.now = h.now.Add(d)
	h.clockMu.Unlock()
}

var caller = app.Caller{
	Account: domain.Account{ID: "acct_1", MerchantName: "Loja", MerchantCity: "SAO PAULO", DefaultExpiry: time.Hour},
	Mode:    domain.ModeTest,
}

func render(c *domain.Charge) (app.Response, error) {
	b, err := json.Marshal(c.Public(domain.Links{CheckoutBase: "https://pay.example.com/c"}))
	return app.Response{StatusCode: 201, Body: b}, err
}

func (h *harness) create(t *testing.T, in app.CreateChargeInput, key string) (app.Response, error) {
	t.Helper()
	if in.Methods == nil {
		in.Methods = []domain.Method{domain.MethodPix}
	}
	return h.svc.Create(context.Background(), caller, in, app.Idempotency{Key: key, Fingerprint: "fp-" + key}, render)
}

func chargeID(t *testing.T, body []byte) string {
	t.Helper()
	var pc domain.PublicCharge
	if err := json.Unmarshal(body, &pc); err != nil {
		t.Fatal(err)
	}
	raw, ok := domain.ParseChargeID(pc.ID)
	if !ok {
		t.Fatalf("bad id %q", pc.ID)
	}
	return raw
}

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
	if len(h.cache.CompleteCalls()) != 1 || len(h.cache.ReleaseCalls()) != 0 {
		t.Errorf("cache: %d completes, %d releases", len(h.cache.CompleteCalls()), len(h.cache.ReleaseCalls()))
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
		wantAcquire int
	}{
		{name: "cache replay", claim: ports.Claim{State: ports.ClaimCompleted, Fingerprint: "fp-k", StatusCode: 201, Body: []byte(`{"id":"x"}`)}, wantReplay: true},
		{name: "cache conflict", claim: ports.Claim{State: ports.ClaimCompleted, Fingerprint: "other", StatusCode: 201}, wantErr: app.ErrIdempotencyKeyReused},
		{name: "in flight", claim: ports.Claim{State: ports.ClaimInFlight, Fingerprint: "fp-k"}, wantErr: app.ErrIdempotencyKeyInUse},
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

func TestSettlementOutcomes(t *testing.T) {
	t.Parallel()
	const lock = "52998224725"
	cases := []struct {
		name        string
		lock        string
		payer       string
		amount      int64
		want        domain.TxStatus
		wantOutcome domain.SettlementOutcome
		wantReturn  bool
		wantEvents  []domain.EventType
	}{
		{"no lock", "", "", 1000, domain.TxPaid, domain.OutcomePaid, false,
			[]domain.EventType{domain.EventChargePaid, domain.EventPaymentCompleted, domain.EventPaymentStatusChanged}},
		{"lock matches (punctuated)", lock, "529.982.247-25", 1000, domain.TxPaid, domain.OutcomePaid, false,
			[]domain.EventType{domain.EventChargePaid, domain.EventPaymentCompleted, domain.EventPaymentStatusChanged}},
		{"other payer", lock, "11144477735", 1000, domain.TxRefunded, domain.OutcomePayerMismatch, true,
			[]domain.EventType{domain.EventChargeRefunded, domain.EventPaymentRefunded, domain.EventPaymentStatusChanged}},
		{"undisclosed", lock, "", 1000, domain.TxProcessing, domain.OutcomeHeldForReview, false,
			[]domain.EventType{domain.EventPaymentStatusChanged}},
		{"underpaid", "", "", 999, domain.TxWaitingPayment, domain.OutcomeUnderpaid, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			in := app.CreateChargeInput{Amount: 1000, ExpectedPayer: tc.lock}
			if tc.lock != "" {
				in.Customer = domain.Customer{Name: "Maria"}
			}
			resp, err := h.create(t, in, "settle-key")
			if err != nil {
				t.Fatal(err)
			}
			id := chargeID(t, resp.Body)
			h.events = nil
			p := domain.PixPayment{EndToEndID: "E99999999202611221200abcdefghijk", Amount: tc.amount, PayerTaxID: tc.payer, PaidAt: h.now.Add(time.Minute)}
			res, err := h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, p)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.wantOutcome || res.Charge.Status() != tc.want {
				t.Fatalf("outcome %s status %s, want %s %s", res.Outcome, res.Charge.Status(), tc.wantOutcome, tc.want)
			}
			returns := h.acquirer.ReturnPixCalls()
			if (len(returns) == 1) != tc.wantReturn {
				t.Fatalf("%d returns, want return=%v", len(returns), tc.wantReturn)
			}
			if tc.wantReturn && (returns[0].Req.EndToEndID != p.EndToEndID || returns[0].Req.Amount != tc.amount) {
				t.Errorf("return %+v does not address the payment", returns[0].Req)
			}
			if tc.wantOutcome == domain.OutcomePayerMismatch && res.Charge.ReturnState() != domain.ReturnDone {
				t.Errorf("return state %q, want done", res.Charge.ReturnState())
			}
			var got []domain.EventType
			for _, e := range h.events {
				got = append(got, e.Type)
			}
			if !equalTypes(got, tc.wantEvents) {
				t.Errorf("events %v, want %v", got, tc.wantEvents)
			}
			// A replayed notification changes nothing.
			h.events = nil
			res2, err := h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, p)
			if tc.wantOutcome != domain.OutcomeUnderpaid {
				if err != nil || res2.Outcome != domain.OutcomeDuplicate || len(h.events) != 0 {
					t.Errorf("replay: %v %v, %d events", res2.Outcome, err, len(h.events))
				}
			}
		})
	}
}

func equalTypes(a, b []domain.EventType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReturnRetriedByWorkerWhenAcquirerWasDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp, err := h.create(t, app.CreateChargeInput{Amount: 1000, ExpectedPayer: "52998224725", Customer: domain.Customer{Name: "Maria"}}, "ret-key-1")
	if err != nil {
		t.Fatal(err)
	}
	id := chargeID(t, resp.Body)
	h.acquirer.ReturnPixFunc = func(context.Context, ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
		return nil, ports.ErrAcquirerUnavailable
	}
	p := domain.PixPayment{EndToEndID: "E99999999202611221200abcdefghijk", Amount: 1000, PayerTaxID: "11144477735", PaidAt: h.now}
	res, err := h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, p)
	if err != nil || res.Charge.ReturnState() != domain.ReturnRequested {
		t.Fatalf("err %v state %q: the return must stay requested", err, res.Charge.ReturnState())
	}
	h.acquirer.ReturnPixFunc = func(_ context.Context, r ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
		return &ports.ReturnPixResponse{ProviderRef: r.ReturnID}, nil
	}
	h.store.ListPendingReturnsFunc = func(context.Context, int) ([]ports.ChargeRef, error) {
		return []ports.ChargeRef{{Scope: caller.Scope(), ID: id}}, nil
	}
	n, err := h.svc.RetryReturns(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("RetryReturns = %d, %v", n, err)
	}
	if got := h.charges[id].ReturnState(); got != domain.ReturnDone {
		t.Fatalf("return state %q after the worker", got)
	}
	calls := h.acquirer.ReturnPixCalls()
	if calls[0].Req.ReturnID != calls[len(calls)-1].Req.ReturnID {
		t.Error("the retried return used another return id: it could be paid twice")
	}
}

func TestExpiredChargeReadsExpiredAndPersists(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ttl := int64(60)
	resp, err := h.create(t, app.CreateChargeInput{Amount: 500, ExpiresIn: &ttl}, "exp-key-01")
	if err != nil {
		t.Fatal(err)
	}
	id := chargeID(t, resp.Body)
	h.advance(59 * time.Second)
	c, err := h.svc.Get(context.Background(), caller, id)
	if err != nil || c.Status() != domain.TxWaitingPayment {
		t.Fatalf("before expiry: %v %v", c.Status(), err)
	}
	h.advance(time.Second)
	h.events = nil
	c, err = h.svc.Get(context.Background(), caller, id)
	if err != nil || c.Status().Public() != domain.StatusExpired {
		t.Fatalf("at expiry: %v %v", c.Status(), err)
	}
	if h.charges[id].Status() != domain.TxExpired || len(h.events) == 0 || h.events[0].Type != domain.EventChargeExpired {
		t.Fatalf("expiry not persisted with its events: %v %v", h.charges[id].Status(), h.events)
	}
	_, err = h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, domain.PixPayment{
		EndToEndID: "E99999999202611221200abcdefghijk", Amount: 500, PaidAt: h.now})
	if !errors.Is(err, domain.ErrChargeNotPayable) {
		t.Fatalf("payment after expiry: %v", err)
	}
}

func TestTestHelpersRefuseLiveMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	live := caller
	live.Mode = domain.ModeLive
	sim := &mocks.PaymentSimulatorMock{}
	if _, err := h.svc.SimulatePayment(context.Background(), sim, live, "x", app.PayInput{}); !errors.Is(err, app.ErrTestModeOnly) {
		t.Errorf("pay with live key: %v", err)
	}
	if _, err := h.svc.ExpireTestCharge(context.Background(), live, "x"); !errors.Is(err, app.ErrTestModeOnly) {
		t.Errorf("expire with live key: %v", err)
	}
	if len(sim.SimulatePixPaymentCalls()) != 0 {
		t.Error("the simulator was called for a live key")
	}
}
