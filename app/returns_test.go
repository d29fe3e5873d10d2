package app_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// returnsPSP plays API Pix devoluções: each id is one devolução, accepted
// EM_PROCESSAMENTO (IN_PROGRESS) and answered by the payer's bank when it
// is next read; a known id is answered as it stands, never sent again.
type returnsPSP struct {
	mu sync.Mutex
	// refuse is how many new devoluções, from the next, the payer's bank
	// refuses.
	refuse int
	// loseAnswers is how many PUT answers, from the next, are lost after
	// the devolução was made (a timeout, or the process dying).
	loseAnswers int
	devs        map[string]*fakeDevolucao
	order       []string // devolução ids, in the order made
}

type fakeDevolucao struct {
	e2e     string
	amount  int64
	status  domain.PixReturnStatus
	refused bool
}

func newFakePSP(h *harness) *returnsPSP {
	p := &returnsPSP{devs: map[string]*fakeDevolucao{}}
	h.acquirer.ReturnPixFunc = p.put
	h.acquirer.ReturnPixStatusFunc = p.get
	return p
}

func (p *returnsPSP) answer(id string, d *fakeDevolucao) *ports.ReturnPixResponse {
	out := &ports.ReturnPixResponse{ProviderRef: "psp:" + id, Status: d.status}
	if d.status == domain.PixReturnFailed {
		out.Failure = "conta do pagador encerrada"
	}
	return out
}

func (p *returnsPSP) put(_ context.Context, r ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(r.ReturnID) > 35 || strings.Trim(r.ReturnID, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
		return nil, ports.ErrAcquirerRejected
	}
	d, ok := p.devs[r.ReturnID]
	if !ok {
		d = &fakeDevolucao{e2e: r.EndToEndID, amount: r.Amount, status: domain.PixReturnInProgress, refused: p.refuse > 0}
		p.refuse--
		p.devs[r.ReturnID] = d
		p.order = append(p.order, r.ReturnID)
	}
	if p.loseAnswers > 0 {
		p.loseAnswers--
		return nil, ports.ErrAcquirerUnavailable
	}
	return p.answer(r.ReturnID, d), nil
}

func (p *returnsPSP) get(_ context.Context, r ports.ReturnPixStatusRequest) (*ports.ReturnPixResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.devs[r.ReturnID]
	if !ok || d.e2e != r.EndToEndID {
		return nil, ports.ErrNotFound
	}
	if d.status == domain.PixReturnInProgress {
		d.status = domain.PixReturnReturned
		if d.refused {
			d.status = domain.PixReturnFailed
		}
	}
	return p.answer(r.ReturnID, d), nil
}

// devolucoes are the devolução ids made, in order.
func (p *returnsPSP) devolucoes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.order)
}

const returnE2E = "E99999999202611221200abcdefghijk"

// owePayer pays a charge so that Quita owes the payer their money back:
// a payer the lock refuses, or a wrong amount.
func owePayer(t *testing.T, h *harness, mismatch bool) (string, app.Settled) {
	t.Helper()
	in := app.CreateChargeInput{Amount: 1000}
	p := domain.PixPayment{EndToEndID: returnE2E, Amount: 1000, PaidAt: h.now.Add(time.Minute)}
	if mismatch {
		in.ExpectedPayer, in.Customer = "52998224725", domain.Customer{Name: "Maria"}
		p.PayerTaxID = "11144477735"
	} else {
		p.Amount = 900
	}
	resp, err := h.create(t, in, "owe-key-1")
	if err != nil {
		t.Fatal(err)
	}
	id := chargeID(t, resp.Body)
	res, err := h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, p)
	if err != nil {
		t.Fatal(err)
	}
	return id, res
}

func (h *harness) eventTypes() []domain.EventType {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []domain.EventType
	for _, e := range h.events {
		out = append(out, e.Type)
	}
	return out
}

func (h *harness) charge(id string) *domain.Charge {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.charges[id]
}

// runReturns lets time pass and runs the returns worker, rounds times.
func (h *harness) runReturns(t *testing.T, rounds int) {
	t.Helper()
	for range rounds {
		h.advance(2 * time.Minute)
		if _, err := h.svc.AdvanceReturns(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A devolução the acquirer accepted and the payer's bank then refused is
// asked again under a new id, and the return ends confirmed. Until then a
// mismatched charge reads processing and nothing says refunded.
func TestRefusedReturnIsRetriedUnderANewID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		mismatch   bool
		heldStatus domain.TxStatus
		endStatus  domain.TxStatus
	}{
		{"payer lock mismatch", true, domain.TxProcessing, domain.TxRefunded},
		{"wrong amount", false, domain.TxWaitingPayment, domain.TxWaitingPayment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			psp := newFakePSP(h)
			psp.refuse = 1
			id, res := owePayer(t, h, tc.mismatch)
			if res.Charge.Status() != tc.heldStatus {
				t.Fatalf("after the refusal the charge is %s, want %s", res.Charge.Status(), tc.heldStatus)
			}
			r, _ := h.pixReturn(returnE2E)
			if r.Status != domain.PixReturnRequested || r.Attempt != 2 || r.Failure == "" {
				t.Fatalf("after the refusal the return is %+v, want attempt 2 requested with the failure", r)
			}
			if slices.Contains(h.eventTypes(), domain.EventChargeRefunded) || slices.Contains(h.eventTypes(), domain.EventPaymentRefunded) {
				t.Fatalf("a refused return was announced as refunded: %v", h.eventTypes())
			}
			// The next notification of the same Pix changes nothing and
			// sends nothing (the return is already owed).
			amount := int64(900)
			if tc.mismatch {
				amount = 1000
			}
			if _, err := h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, domain.PixPayment{
				EndToEndID: returnE2E, Amount: amount, PayerTaxID: "11144477735", PaidAt: h.now,
			}); err != nil {
				t.Fatal(err)
			}
			if n := len(psp.devolucoes()); n != 1 {
				t.Fatalf("%d devoluções before the retry, want 1", n)
			}
			h.runReturns(t, 1)
			got, _ := h.pixReturn(returnE2E)
			if got.Status != domain.PixReturnReturned {
				t.Fatalf("return after the retry: %+v", got)
			}
			want := []string{domain.ReturnAttemptID(returnE2E, 1), domain.ReturnAttemptID(returnE2E, 2)}
			if devs := psp.devolucoes(); !slices.Equal(devs, want) {
				t.Fatalf("devoluções %v, want %v (a new id for the retry)", devs, want)
			}
			c := h.charge(id)
			if c.Status() != tc.endStatus {
				t.Errorf("charge %s, want %s", c.Status(), tc.endStatus)
			}
			refunded := 0
			for _, e := range h.eventTypes() {
				if e == domain.EventChargeRefunded {
					refunded++
				}
			}
			if tc.mismatch && (refunded != 1 || c.ReturnState() != domain.ReturnDone) {
				t.Errorf("%d charge.refunded, return state %q; want 1 and done", refunded, c.ReturnState())
			}
			if st := h.svc.ReturnStats(); st.Refused != 1 || st.Confirmed != 1 || st.Surfaced != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// A return every payer's bank refuses ends FAILED after the configured
// attempts, each under its own id, surfaced for an operator, and the
// charge never reads refunded.
func TestAlwaysRefusedReturnIsSurfacedNotRefunded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	psp := newFakePSP(h)
	psp.refuse = 100
	id, _ := owePayer(t, h, true)
	h.runReturns(t, 10)
	r, _ := h.pixReturn(returnE2E)
	if r.Status != domain.PixReturnFailed || r.Attempt != app.DefaultReturnAttempts {
		t.Fatalf("return %+v, want FAILED after %d attempts", r, app.DefaultReturnAttempts)
	}
	devs := psp.devolucoes()
	if len(devs) != app.DefaultReturnAttempts {
		t.Fatalf("%d devoluções, want %d", len(devs), app.DefaultReturnAttempts)
	}
	for i, d := range devs {
		if d != domain.ReturnAttemptID(returnE2E, i+1) {
			t.Errorf("devolução %d id %q", i+1, d)
		}
	}
	c := h.charge(id)
	if c.Status() != domain.TxProcessing || c.Status().Public() != domain.StatusProcessing || c.ReturnState() != domain.ReturnFailed {
		t.Errorf("charge %s (%s), return state %q; want processing and failed", c.Status(), c.Status().Public(), c.ReturnState())
	}
	for _, e := range h.eventTypes() {
		if e == domain.EventChargeRefunded || e == domain.EventPaymentRefunded {
			t.Errorf("event %s for a return that never happened", e)
		}
	}
	if st := h.svc.ReturnStats(); st.Surfaced != 1 || st.Refused != uint64(app.DefaultReturnAttempts) || st.Confirmed != 0 {
		t.Errorf("stats %+v", st)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, "an operator must return the money") ||
		!strings.Contains(logs, returnE2E) {
		t.Errorf("no error-level log for the operator:\n%s", logs)
	}
	if strings.Contains(logs, "11144477735") || strings.Contains(logs, "52998224725") {
		t.Errorf("the logs show a payer document:\n%s", logs)
	}
	// FAILED is final: the worker sends nothing more.
	h.runReturns(t, 2)
	if n := len(psp.devolucoes()); n != app.DefaultReturnAttempts {
		t.Errorf("%d devoluções after FAILED", n)
	}
}

// A crash between the acquirer accepting a devolução and Quita recording
// it does not make a second devolução of the same attempt: the worker asks
// again under the same id and the acquirer answers the one it has.
func TestCrashAfterAcceptanceMakesOneDevolucao(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		crash func(h *harness, psp *returnsPSP)
	}{
		{"answer lost", func(_ *harness, psp *returnsPSP) { psp.loseAnswers = 1 }},
		{"record not written", func(h *harness, _ *returnsPSP) {
			failed := false
			h.beforeWrite = func(ch ports.ChargeChange) error {
				for _, r := range ch.Returns {
					if r.Status != domain.PixReturnRequested && !failed {
						failed = true
						return errors.New("process died")
					}
				}
				return nil
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			psp := newFakePSP(h)
			tc.crash(h, psp)
			id, res := owePayer(t, h, true)
			if res.Charge.Status() != domain.TxProcessing {
				t.Fatalf("charge %s before the worker", res.Charge.Status())
			}
			if r, _ := h.pixReturn(returnE2E); r.Status != domain.PixReturnRequested || r.Attempt != 1 {
				t.Fatalf("return %+v: the acceptance must not be recorded", r)
			}
			h.runReturns(t, 2)
			if devs := psp.devolucoes(); len(devs) != 1 || devs[0] != domain.ReturnAttemptID(returnE2E, 1) {
				t.Fatalf("devoluções %v, want the first attempt's only", devs)
			}
			if r, _ := h.pixReturn(returnE2E); r.Status != domain.PixReturnReturned || r.Attempt != 1 {
				t.Errorf("return %+v", r)
			}
			if c := h.charge(id); c.Status() != domain.TxRefunded {
				t.Errorf("charge %s, want REFUNDED", c.Status())
			}
		})
	}
}

// returningSandbox is the sandbox whose devoluções are returnsPSP's.
type returningSandbox struct {
	*sandbox.Acquirer
	psp *returnsPSP
}

func (s returningSandbox) ReturnPix(ctx context.Context, r ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	return s.psp.put(ctx, r)
}

func (s returningSandbox) ReturnPixStatus(ctx context.Context, r ports.ReturnPixStatusRequest) (*ports.ReturnPixResponse, error) {
	return s.psp.get(ctx, r)
}

// Cancelling a held charge owes its payer a return: recorded with the
// cancel in the database, sent, retried under a new id when the payer's
// bank refuses it, confirmed; the charge stays cancelled.
func TestCancelledHoldIsReturnedUntilConfirmed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, testenv.SQLiteDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(t0)
	psp := &returnsPSP{devs: map[string]*fakeDevolucao{}, refuse: 1}
	acq := returningSandbox{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock), psp: psp}
	charges := app.NewChargeService(db, checked(db, idempotency.NewMemory(clock.Now), clock), acq, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{})
	payments := app.NewPaymentService(charges, db, db, acq, clock, app.RandomIDs{}, discard(), app.PaymentsConfig{})
	caller := app.Caller{Account: domain.Account{ID: "acct_hold", MerchantName: "Loja", MerchantCity: "SAO PAULO"}, Mode: domain.ModeTest}
	resp, err := charges.Create(ctx, caller, app.CreateChargeInput{Amount: 1000, Currency: "BRL", Methods: []domain.Method{domain.MethodPix},
		ExpectedPayer: "52998224725", Customer: domain.Customer{Name: "Maria"}}, app.Idempotency{Key: "hold-charge", Fingerprint: "f"},
		func(c *domain.Charge) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(c.ID())}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	id := string(resp.Body)
	res, err := charges.ApplyPixPayment(ctx, caller.Scope(), id, domain.PixPayment{EndToEndID: returnE2E, Amount: 1000, PaidAt: clock.Now()})
	if err != nil || res.Outcome != domain.OutcomeHeldForReview {
		t.Fatalf("%v %v", res.Outcome, err)
	}
	if len(psp.devolucoes()) != 0 {
		t.Fatal("a held payment was returned")
	}
	c, err := payments.Cancel(ctx, caller, id)
	if err != nil || c.Status() != domain.TxCancelled {
		t.Fatalf("cancel: %v %v", c, err)
	}
	if n := len(psp.devolucoes()); n != 1 {
		t.Fatalf("%d devoluções after the cancel, want 1 (sent at once)", n)
	}
	for range 2 {
		clock.Advance(2 * time.Minute)
		if _, err := charges.AdvanceReturns(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := charges.PixReturns(ctx, domain.PixReturnReturned, 10)
	if err != nil || len(rs) != 1 || rs[0].Reason != domain.ReturnForCancelledHold || rs[0].Attempt != 2 {
		t.Fatalf("returned: %+v, %v", rs, err)
	}
	if devs := psp.devolucoes(); !slices.Equal(devs, []string{domain.ReturnAttemptID(returnE2E, 1), domain.ReturnAttemptID(returnE2E, 2)}) {
		t.Errorf("devoluções %v", devs)
	}
	got, err := charges.Get(ctx, caller, id)
	if err != nil || got.Status() != domain.TxCancelled || got.ReturnState() != domain.ReturnDone {
		t.Errorf("charge %v state %q, %v; want cancelled with its return done", got.Status(), got.ReturnState(), err)
	}
}

// A devolução the PSP refuses for Quita's credentials or the account's
// configuration is no refusal by the payer's bank: the return stays owed
// (no new attempt, never FAILED), each try is counted as blocked and
// logged as an alert for an operator, the next try waits ReturnBlockedWait
// (not the lease's seconds), and once the configuration is fixed the next
// try returns the money.
func TestReturnBlockedByCredentialsIsAlertedAndKept(t *testing.T) {
	t.Parallel()
	for _, refusal := range []error{ports.ErrAcquirerUnauthorized, ports.ErrAcquirerNotConfigured} {
		t.Run(refusal.Error(), func(t *testing.T) {
			h := newHarness(t)
			psp := newFakePSP(h)
			var tries atomic.Int32
			h.acquirer.ReturnPixFunc = func(context.Context, ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
				tries.Add(1)
				return nil, refusal
			}
			id, _ := owePayer(t, h, true) // tried once right after the commit
			if n := tries.Load(); n != 1 {
				t.Fatalf("%d tries after the commit, want 1", n)
			}
			r, _ := h.pixReturn(returnE2E)
			if want := h.now.Add(app.ReturnBlockedWait); r.DueAt.Before(want.Add(-time.Second)) {
				t.Fatalf("blocked return due at %s, want about %s", r.DueAt, want)
			}
			h.runReturns(t, 2) // 4 minutes: still waiting
			if n := tries.Load(); n != 1 {
				t.Errorf("%d tries within ReturnBlockedWait, want none after the first", n)
			}
			h.runReturns(t, 1) // 6 minutes: due again, blocked again
			if n := tries.Load(); n != 2 {
				t.Errorf("%d tries after ReturnBlockedWait, want 2", n)
			}
			r, _ = h.pixReturn(returnE2E)
			if r.Status != domain.PixReturnRequested || r.Attempt != 1 {
				t.Fatalf("return %+v, want still REQUESTED at its first attempt", r)
			}
			st := h.svc.ReturnStats()
			if st.Blocked != 2 || st.Refused != 0 || st.Surfaced != 0 || st.Confirmed != 0 {
				t.Errorf("stats %+v, want two blocked tries and nothing else", st)
			}
			logs := h.logs.String()
			if !strings.Contains(logs, `"alert":"return_blocked"`) || !strings.Contains(logs, `"level":"ERROR"`) {
				t.Errorf("no alert for the operator:\n%s", logs)
			}
			if strings.Contains(logs, "11144477735") || strings.Contains(logs, "52998224725") {
				t.Errorf("the logs show a payer document:\n%s", logs)
			}
			// The configuration is fixed: the next try returns the money.
			h.acquirer.ReturnPixFunc = psp.put
			h.runReturns(t, 3)
			if r, _ := h.pixReturn(returnE2E); r.Status != domain.PixReturnReturned || r.Attempt != 1 {
				t.Fatalf("after the fix: return %+v, want RETURNED at its first attempt", r)
			}
			if c := h.charge(id); c.Status().Public() != domain.StatusRefunded {
				t.Errorf("after the fix the charge reads %s, want refunded", c.Status().Public())
			}
			if after := h.svc.ReturnStats(); after.Blocked != st.Blocked || after.Confirmed != 1 {
				t.Errorf("after the fix: stats %+v", after)
			}
		})
	}
}
