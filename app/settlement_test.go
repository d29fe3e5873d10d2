package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

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
		// Held (processing) until the acquirer confirms the return, which
		// the mock does at once: then refunded.
		{"other payer", lock, "11144477735", 1000, domain.TxRefunded, domain.OutcomePayerMismatch, true,
			[]domain.EventType{domain.EventPaymentStatusChanged,
				domain.EventChargeRefunded, domain.EventPaymentRefunded, domain.EventPaymentStatusChanged}},
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
	if err != nil || res.Charge.ReturnState() != domain.ReturnRequested || res.Charge.Status() != domain.TxProcessing {
		t.Fatalf("err %v state %q status %s: the return must stay requested and the charge held", err,
			res.Charge.ReturnState(), res.Charge.Status())
	}
	h.acquirer.ReturnPixFunc = func(_ context.Context, r ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
		return &ports.ReturnPixResponse{ProviderRef: r.ReturnID, Status: domain.PixReturnReturned}, nil
	}
	if n, err := h.svc.AdvanceReturns(context.Background()); err != nil || n != 0 {
		t.Fatalf("AdvanceReturns within the request's lease = %d, %v; want 0", n, err)
	}
	h.advance(time.Minute)
	n, err := h.svc.AdvanceReturns(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("AdvanceReturns = %d, %v", n, err)
	}
	if c := h.charges[id]; c.ReturnState() != domain.ReturnDone || c.Status() != domain.TxRefunded {
		t.Fatalf("after the worker: return state %q status %s", c.ReturnState(), c.Status())
	}
	calls := h.acquirer.ReturnPixCalls()
	if calls[0].Req.ReturnID != calls[len(calls)-1].Req.ReturnID {
		t.Error("the retried return used another return id: it could be paid twice")
	}
}

// A charge reads pending until expires_at plus the grace, then reads
// expired and the expiry is persisted with its events by that read.
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
	if err != nil || c.Status() != domain.TxWaitingPayment || len(h.events) != 0 {
		t.Fatalf("at expiry, in the grace: %v %v, %d events; want pending, nothing written", c.Status(), err, len(h.events))
	}
	h.advance(app.DefaultExpiryGrace - time.Second)
	if c, err = h.svc.Get(context.Background(), caller, id); err != nil || c.Status() != domain.TxWaitingPayment {
		t.Fatalf("a second before the grace ends: %v %v", c.Status(), err)
	}
	h.advance(time.Second)
	c, err = h.svc.Get(context.Background(), caller, id)
	if err != nil || c.Status().Public() != domain.StatusExpired {
		t.Fatalf("when the grace ends: %v %v", c.Status(), err)
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
