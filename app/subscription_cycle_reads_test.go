package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// Cycles reads a subscription's cycles oldest first, each as its summary
// says, and only in the caller's scope: another account or the other
// mode is ErrNotFound.
func TestSubscriptionCyclesRead(t *testing.T) {
	t.Parallel()
	r := newSubRig(t, testenv.SQLiteDSN(t))
	svc := r.process()
	id := r.authorized(svc)
	ctx := context.Background()
	if cs, err := svc.Cycles(ctx, r.caller, id); err != nil || len(cs) != 0 {
		t.Fatalf("before the worker: %d cycles, %v", len(cs), err)
	}
	if _, err := svc.RunSubscriptions(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := svc.Cycles(ctx, r.caller, id)
	if err != nil || len(cs) != 1 {
		t.Fatalf("after the worker: %d cycles, %v", len(cs), err)
	}
	sum := cs[0].Summary()
	sub, err := svc.Get(ctx, r.caller, id)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cycle != 1 || sum.Amount != 4990 || sum.Status != domain.CycleScheduled || sum.Attempts != 1 || sum.NextDebit.IsZero() ||
		sub.Public(domain.Links{}).LatestCycle.Charge != domain.PrefixCharge+sum.ChargeID {
		t.Errorf("cycle 1: %+v", sum)
	}
	other := r.caller
	other.Account.ID = "acct_other"
	live := r.caller
	live.Mode = domain.ModeLive
	for name, caller := range map[string]app.Caller{"another account": other, "live mode": live} {
		if _, err := svc.Cycles(ctx, caller, id); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}
