package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// livePSP is a receiver's PSP whose recs and cobrs stand as the test says,
// read back by GET /rec and GET /cobr (the sandbox answers everything
// else): what a live acquirer reports, notifications lost.
type livePSP struct {
	*sandbox.Acquirer
	mu    sync.Mutex
	rec   *ports.Recurrence
	cobrs map[string]*ports.RecurringCharge
}

func (p *livePSP) GetRecurrence(_ context.Context, _ ports.Scope, recID string) (*ports.Recurrence, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rec == nil {
		return nil, ports.ErrNotFound
	}
	r := *p.rec
	r.RecID = recID
	return &r, nil
}

func (p *livePSP) GetRecurringCharge(_ context.Context, _ ports.Scope, txid string) (*ports.RecurringCharge, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.cobrs[txid]
	if !ok {
		return nil, ports.ErrNotFound
	}
	out := *c
	return &out, nil
}

// liveSubscription creates a live monthly subscription starting in five
// days on a service whose acquirer is psp.
func liveSubscription(t *testing.T, r *subRig, psp *livePSP) (*app.SubscriptionService, string, bizdays.Date) {
	t.Helper()
	r.caller.Mode = domain.ModeLive
	once := exactlyonce.NewDatabaseChecked(r.db, idempotency.NewMemory(r.clock.Now), r.clock, app.RandomIDs{}, discard(), exactlyonce.Config{})
	charges := app.NewChargeService(r.db, once, psp, nil, r.clock, app.RandomIDs{}, discard(), app.ChargesConfig{})
	svc := app.NewSubscriptionService(charges, r.db, r.db, psp, r.clock, app.RandomIDs{}, discard(), app.SubscriptionsConfig{})
	amount := int64(4990)
	start := domain.BrasiliaDate(r.clock.Now()).AddDays(5)
	resp, err := svc.Create(context.Background(), r.caller, app.CreateSubscriptionInput{
		Customer: domain.Customer{Name: "Maria Silva", Document: "52998224725"}, Amount: &amount, Interval: domain.IntervalMonthly,
		StartDate: start, Contract: "CTR-L", RetryPolicy: domain.RetryThreeInSevenDays},
		app.Idempotency{Key: "live-sub-" + time.Now().Format("150405.000000000"), Fingerprint: "fp"},
		func(s *domain.Subscription) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(s.ID())}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return svc, string(resp.Body), start
}

func (p *livePSP) set(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

// In live mode nothing comes from test helpers: the worker asks the
// acquirer how the mandate and each open cycle stand (GET /rec, GET
// /cobr), and applies the payer's authorisation, a rejected debit (a
// retry under the policy, with the bank's reason), the Pix that paid the
// cycle (its charge settled and credited), and the payer's revocation.
func TestLiveSubscriptionFollowsTheAcquirer(t *testing.T) {
	t.Parallel()
	r := newSubRig(t, testenv.SQLiteDSN(t))
	psp := &livePSP{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, r.clock), cobrs: map[string]*ports.RecurringCharge{}}
	svc, id, start := liveSubscription(t, r, psp)
	ctx := context.Background()
	tick := func() {
		t.Helper()
		r.clock.Advance(11 * time.Minute) // past the recheck
		if _, err := svc.RunSubscriptions(ctx); err != nil {
			t.Fatal(err)
		}
	}
	get := func() *domain.Subscription {
		t.Helper()
		s, err := r.db.GetSubscription(ctx, r.caller.Scope(), id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	tick()
	if s := get(); s.Status() != domain.SubscriptionPendingAuthorization {
		t.Fatalf("authorised before the PSP said so: %s", s.Status())
	}
	psp.set(func() { psp.rec = &ports.Recurrence{Status: domain.RecApproved} })
	tick()
	s := get()
	if s.Status() != domain.SubscriptionActive || s.NextCycle() != 2 {
		t.Fatalf("after APROVADA: %s, next cycle %d (its window is open: cycle 1 is scheduled)", s.Status(), s.NextCycle())
	}
	txid := domain.CycleTxID(r.caller.Account.ID, domain.ModeLive, id, 1)
	first := domain.FirstDebitDate(start)
	psp.set(func() {
		psp.cobrs[txid] = &ports.RecurringCharge{TxID: txid, Status: domain.CobRActive, Attempts: []ports.RecurringAttempt{
			{Date: first, Kind: domain.AttemptOnDueDate, Status: domain.AttemptRejected, RejectCode: "AM04"}}}
	})
	tick()
	c, err := r.db.GetCycle(ctx, r.caller.Scope(), id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := c.PendingDebit(); c.PublicStatus() != domain.CycleRetrying || !ok || a.Kind != domain.AttemptRetry || a.Status != domain.AttemptScheduled {
		t.Fatalf("after a rejected debit: %s, pending %+v", c.PublicStatus(), a)
	}
	if l := get().Snapshot().Latest; l == nil || l.FailureCode != "AM04" {
		t.Errorf("the bank's reason is not on the subscription: %+v", l)
	}
	e2e := "E99999999" + r.clock.Now().UTC().Format("200601021504") + "abcdefghijk"
	psp.set(func() {
		psp.cobrs[txid].Pix = []ports.ReceivedPix{{EndToEndID: e2e, TxID: txid, Amount: 4990, PaidAt: r.clock.Now()}}
	})
	tick()
	ch, err := r.db.GetCharge(ctx, r.caller.Scope(), c.ChargeID())
	if err != nil {
		t.Fatal(err)
	}
	if ch.Status() != domain.TxPaid || !ch.Credited() || ch.Settlement().EndToEndID != e2e {
		t.Fatalf("the cycle's charge after its Pix: %s", ch.Status())
	}
	if s := get(); s.Cycles().Paid != 1 || s.Cycles().Open != 0 {
		t.Fatalf("after the Pix: %+v", s.Cycles())
	}
	psp.set(func() { psp.rec = &ports.Recurrence{Status: domain.RecCancelled, CancelledByPayer: true} })
	tick()
	if s := get(); s.Status() != domain.SubscriptionCancelled || s.Snapshot().CancelledBy != domain.CancelledByPayer {
		t.Fatalf("after the payer revoked at the PSP: %s %s", s.Status(), s.Snapshot().CancelledBy)
	}
}
