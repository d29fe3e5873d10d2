package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// What the acquirer reports unasked (its callbacks) is applied as the
// worker applies what it reads: once, forward only. A rec or cobr no
// subscription has is ErrNotFound (the acquirer ignores it); news that
// comes twice, or after the subscription moved past it, changes nothing.
func TestSubscriptionReceivesTheAcquirersNews(t *testing.T) {
	t.Parallel()
	r := newSubRig(t, testenv.SQLiteDSN(t))
	psp := &livePSP{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, r.clock), cobrs: map[string]*ports.RecurringCharge{}}
	svc, id, start := liveSubscription(t, r, psp)
	ctx := context.Background()
	scope := r.caller.Scope()
	sub, err := r.db.GetSubscription(ctx, scope, id)
	if err != nil {
		t.Fatal(err)
	}
	recID := sub.Mandate().RecID
	if err := svc.OnRecurrence(ctx, scope, ports.Recurrence{RecID: "RR999999992027010100000000000", Status: domain.RecApproved}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("an unknown rec: %v", err)
	}
	if err := svc.OnRecurringCharge(ctx, scope, ports.RecurringCharge{TxID: domain.CycleTxID("x", domain.ModeLive, "y", 1)}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("an unknown cobr: %v", err)
	}
	other := ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}
	if err := svc.OnRecurrence(ctx, other, ports.Recurrence{RecID: recID, Status: domain.RecApproved}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the rec in the other mode: %v", err)
	}
	for _, st := range []domain.RecStatus{domain.RecApproved, domain.RecApproved, domain.RecCreated, domain.RecRejected} {
		if err := svc.OnRecurrence(ctx, scope, ports.Recurrence{RecID: recID, Status: st}); err != nil {
			t.Fatalf("rec %s: %v", st, err)
		}
	}
	get := func() *domain.Subscription {
		t.Helper()
		s, err := r.db.GetSubscription(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := get(); s.Status() != domain.SubscriptionActive {
		t.Fatalf("approved twice, then a late CRIADA and REJEITADA: %s", s.Status())
	}
	if _, err := svc.RunSubscriptions(ctx); err != nil {
		t.Fatal(err)
	}
	txid := domain.CycleTxID(r.caller.Account.ID, domain.ModeLive, id, 1)
	first := domain.FirstDebitDate(start)
	rejected := ports.RecurringCharge{TxID: txid, Status: domain.CobRActive, Attempts: []ports.RecurringAttempt{
		{Date: first, Kind: domain.AttemptOnDueDate, Status: domain.AttemptRejected, RejectCode: "AM02"}}}
	for range 2 {
		if err := svc.OnRecurringCharge(ctx, scope, rejected); err != nil {
			t.Fatal(err)
		}
	}
	c, err := r.db.GetCycle(ctx, scope, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Attempts()); c.PublicStatus() != domain.CycleRetrying || n != 2 || c.Retries() != 1 {
		t.Fatalf("a refused debit reported twice: %s with %d debits, %d retries", c.PublicStatus(), n, c.Retries())
	}
	retry, _ := c.PendingDebit()
	paid := ports.RecurringCharge{TxID: txid, Status: domain.CobRConcluded, Attempts: []ports.RecurringAttempt{rejected.Attempts[0],
		{Date: retry.Date, Kind: domain.AttemptRetry, Status: domain.AttemptPaid}},
		Pix: []ports.ReceivedPix{{EndToEndID: "E99999999" + r.clock.Now().UTC().Format("200601021504") + "abcdefghijk", TxID: txid,
			Amount: 4990, PaidAt: r.clock.Now()}}}
	for _, news := range []ports.RecurringCharge{paid, paid, rejected} {
		if err := svc.OnRecurringCharge(ctx, scope, news); err != nil {
			t.Fatal(err)
		}
	}
	if s := get(); s.Cycles().Paid != 1 || s.Cycles().Open != 0 || s.Cycles().Failed != 0 {
		t.Fatalf("paid twice, then the old refusal: %+v", s.Cycles())
	}
	for _, rec := range []ports.Recurrence{{RecID: recID, Status: domain.RecCancelled, CancelledByPayer: true},
		{RecID: recID, Status: domain.RecCancelled}, {RecID: recID, Status: domain.RecApproved}} {
		if err := svc.OnRecurrence(ctx, scope, rec); err != nil {
			t.Fatal(err)
		}
	}
	if s := get(); s.Status() != domain.SubscriptionCancelled || s.Snapshot().CancelledBy != domain.CancelledByPayer {
		t.Fatalf("revoked, then a late cancel and approval: %s by %s", s.Status(), s.Snapshot().CancelledBy)
	}
}
