package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// A cobr the PSP closed as REJEITADA (a fatal reason such as AC05, a
// closed account) takes no retry even under three_in_seven_days: the
// cycle fails at once, its charge follows, and nothing asks the PSP for a
// retry it would refuse.
func TestLiveRejectedCobrFailsTheCycle(t *testing.T) {
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
	psp.set(func() { psp.rec = &ports.Recurrence{Status: domain.RecApproved} })
	tick()
	txid := domain.CycleTxID(r.caller.Account.ID, domain.ModeLive, id, 1)
	psp.set(func() {
		psp.cobrs[txid] = &ports.RecurringCharge{TxID: txid, Status: domain.CobRRejected, Attempts: []ports.RecurringAttempt{
			{Date: domain.FirstDebitDate(start), Kind: domain.AttemptOnDueDate, Status: domain.AttemptRejected, RejectCode: "AC05"}}}
	})
	tick()
	c, err := r.db.GetCycle(ctx, r.caller.Scope(), id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, pending := c.PendingDebit(); c.PublicStatus() != domain.CycleFailed || pending || c.Failures() != 1 {
		t.Fatalf("after a REJEITADA cobr: %s, pending %v, %d failures", c.PublicStatus(), pending, c.Failures())
	}
	s, err := r.db.GetSubscription(ctx, r.caller.Scope(), id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cycles().Failed != 1 || s.Snapshot().Latest == nil || s.Snapshot().Latest.FailureCode != "AC05" {
		t.Fatalf("the subscription after the failed cycle: %+v %+v", s.Cycles(), s.Snapshot().Latest)
	}
	tick()
	ch, err := r.db.GetCharge(ctx, r.caller.Scope(), c.ChargeID())
	if err != nil {
		t.Fatal(err)
	}
	if ch.Status().Open() {
		t.Errorf("the failed cycle's charge is still %s", ch.Status())
	}
}
