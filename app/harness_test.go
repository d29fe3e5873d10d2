package app_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// harness wires a ChargeService over moq mocks whose store keeps charges
// in a map, so tests can assert both results and recorded calls.
type harness struct {
	svc      *app.ChargeService
	store    *mocks.ChargeStoreMock
	records  *mocks.IdempotencyStoreMock
	cache    *mocks.IdempotencyCacheMock
	acquirer *mocks.AcquirerMock
	clockMu  sync.Mutex
	now      time.Time

	mu      sync.Mutex
	charges map[string]*domain.Charge
	events  []domain.Event
	entries []domain.JournalEntry
	recs    map[ports.IdempotencyKey]ports.IdempotencyRecord
	returns map[string]domain.PixReturn // by end-to-end id
	// beforeWrite, when set, may fail a charge write after fn computed
	// its change (a crash between the acquirer's answer and its record).
	beforeWrite func(ports.ChargeChange) error
	// logs holds what the service logged (JSON lines).
	logs *testkit.Buffer
}

// harnessTx is ports.ChargeTx over the harness's maps (its lock held).
type harnessTx struct {
	h        *harness
	chargeID string
}

func (t harnessTx) Balance(_ context.Context, cur domain.Currency) (domain.Balance, error) {
	return domain.Balance{Currency: cur}, nil
}

func (t harnessTx) GetRefund(context.Context, string) (*domain.Refund, error) {
	return nil, ports.ErrNotFound
}

func (t harnessTx) GetPixReturn(_ context.Context, e2e string) (*domain.PixReturn, error) {
	r, ok := t.h.returns[e2e]
	if !ok || r.ChargeID != t.chargeID {
		return nil, ports.ErrNotFound
	}
	return &r, nil
}

func (t harnessTx) RefundDebit(context.Context, string) (domain.RefundDebit, error) {
	return domain.RefundDebit{}, ports.ErrNotFound
}

func (t harnessTx) WalletOf(_ context.Context, _ string, cur domain.Currency) (domain.Balance, error) {
	return domain.Balance{Currency: cur}, nil
}

func (t harnessTx) Platform(context.Context) (string, error) { return "", nil }

func (t harnessTx) SplitDebits(context.Context, string) ([]domain.SplitDebit, error) { return nil, nil }

// pixReturn reads a stored return.
func (h *harness) pixReturn(e2e string) (domain.PixReturn, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.returns[e2e]
	return r, ok
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newGuardedHarness(t, nil)
}

// newGuardedHarness is newHarness with a fraud guard in front of Create.
func newGuardedHarness(t *testing.T, guard *app.FraudGuard) *harness {
	t.Helper()
	h := &harness{now: t0, charges: map[string]*domain.Charge{}, recs: map[ports.IdempotencyKey]ports.IdempotencyRecord{},
		returns: map[string]domain.PixReturn{}, logs: &testkit.Buffer{}}
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
			change, err := fn(ctx, work, harnessTx{h: h, chargeID: id})
			if err != nil {
				return err
			}
			if h.beforeWrite != nil {
				if err := h.beforeWrite(change); err != nil {
					return err
				}
			}
			h.charges[id] = work
			h.events = append(h.events, change.Events...)
			h.entries = append(h.entries, change.Entries...)
			for _, r := range change.Returns {
				h.returns[r.EndToEndID] = r
			}
			return nil
		},
		ClaimPixReturnsFunc: func(_ context.Context, now, leaseUntil time.Time, limit int) ([]domain.PixReturn, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			var out []domain.PixReturn
			for e2e, r := range h.returns {
				if r.Status.Final() || r.DueAt.After(now) || len(out) == limit {
					continue
				}
				r.DueAt = leaseUntil
				h.returns[e2e] = r
				out = append(out, r)
			}
			return out, nil
		},
	}
	h.records = &mocks.IdempotencyStoreMock{
		GetIdempotencyRecordFunc: func(_ context.Context, k ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			r, ok := h.recs[k]
			if !ok {
				return nil, ports.ErrNotFound
			}
			return &r, nil
		},
		// Live creates record their cob's intent; the harness keeps none
		// (the tests of the sweep bring their own).
		RecordProviderIntentFunc: func(context.Context, ports.ProviderIntent) error { return nil },
		DeleteProviderIntentFunc: func(context.Context, ports.IdempotencyKey) error { return nil },
		ProviderIntentsBeforeFunc: func(context.Context, time.Time, int) ([]ports.ProviderIntent, error) {
			return nil, nil
		},
		FindChargeByTxIDFunc: h.findChargeByTxID,
	}
	h.records.IdempotencyRecordOrIntentFunc = func(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
		return h.records.GetIdempotencyRecord(ctx, in.Key)
	}
	h.cache = &mocks.IdempotencyCacheMock{
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{State: ports.ClaimAcquired}, nil
		},
		CompleteFunc:         func(context.Context, string, string, int, []byte, time.Duration) error { return nil },
		CompleteInRecordFunc: func(context.Context, time.Duration, ...ports.Answered) error { return nil },
		ReleaseFunc:          func(context.Context, string, string) error { return nil },
		ExtendFunc:           func(context.Context, string, string, time.Duration) (bool, error) { return true, nil },
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
			return &ports.ReturnPixResponse{ProviderRef: r.ReturnID, Status: domain.PixReturnReturned}, nil
		},
		ReturnPixStatusFunc: func(_ context.Context, r ports.ReturnPixStatusRequest) (*ports.ReturnPixResponse, error) {
			return &ports.ReturnPixResponse{ProviderRef: r.ReturnID, Status: domain.PixReturnReturned}, nil
		},
	}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { h.clockMu.Lock(); defer h.clockMu.Unlock(); return h.now }}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }}
	h.svc = app.NewChargeService(h.store, exactlyonce.NewDatabaseChecked(h.records, h.cache, clock, ids, slog.New(slog.NewJSONHandler(h.logs, nil)), exactlyonce.Config{}), h.acquirer, guard, clock, ids, slog.New(slog.NewJSONHandler(h.logs, nil)),
		app.ChargesConfig{
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

// findChargeByTxID is ports.IdempotencyStore.FindChargeByTxID over the
// harness's charges.
func (h *harness) findChargeByTxID(_ context.Context, s ports.Scope, txid string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, c := range h.charges {
		if p := c.Pix(); p != nil && p.TxID == txid && c.AccountID() == s.AccountID && c.Mode() == s.Mode {
			return id, nil
		}
	}
	return "", ports.ErrNotFound
}

// A create answered with app.AnswerPublic answers 201 with the charge's
// public object — the same bytes a Respond encoding it gives — taken from
// its charge.created event: the record holds those bytes, and the event
// carries them as its data.object.
func TestCreateAnswerPublicIsTheEventsObject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	in := app.CreateChargeInput{Amount: 1990, Currency: "BRL", Methods: []domain.Method{domain.MethodPix},
		Description: `<b>"data":{"object":</b>`, Metadata: map[string]any{"pedido": "ção"}}
	resp, err := h.svc.Create(context.Background(), caller, in, app.Idempotency{Key: "answer-public-1", Fingerprint: "fp"}, app.AnswerPublic)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.charges) != 1 {
		t.Fatalf("%d charges stored, want 1", len(h.charges))
	}
	var c *domain.Charge
	for _, stored := range h.charges {
		c = stored
	}
	want, err := render(c)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || string(resp.Body) != string(want.Body) {
		t.Fatalf("answer %d %s, want 201 %s", resp.StatusCode, resp.Body, want.Body)
	}
	rec := h.recs[ports.IdempotencyKey{Scope: caller.Scope(), Key: "answer-public-1"}]
	if string(rec.Body) != string(want.Body) {
		t.Errorf("record body %s, want the answer", rec.Body)
	}
	found := false
	for _, ev := range h.events {
		if obj, ok := ev.CanonicalObject(); ok && ev.Type == domain.EventChargeCreated {
			found = string(obj) == string(want.Body) && rec.AnswerEvent == ev.ID
		}
	}
	if !found {
		t.Errorf("no charge.created event carries the answer as its data.object, named by the record (%q): %d events", rec.AnswerEvent, len(h.events))
	}
}

// Another surface's answer is no event's: its record names none, and the
// store keeps it whole.
func TestRenderedAnswerNamesNoEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	in := app.CreateChargeInput{Amount: 1990, Methods: []domain.Method{domain.MethodPix}}
	if _, err := h.svc.Create(context.Background(), caller, in, app.Idempotency{Key: "answer-render-1", Fingerprint: "fp"}, render); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rec, ok := h.recs[ports.IdempotencyKey{Scope: caller.Scope(), Key: "answer-render-1"}]
	if !ok || rec.AnswerEvent != "" {
		t.Errorf("recorded %v, naming event %q: want a record naming none", ok, rec.AnswerEvent)
	}
}
