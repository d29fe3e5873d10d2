package app_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// cobCancels counts the cobs an acquirer is asked to cancel.
type cobCancels struct {
	*recurringPSP
	n atomic.Int64
}

func (p *cobCancels) CancelPixCharge(ctx context.Context, req ports.CancelPixChargeRequest) error {
	p.n.Add(1)
	return p.recurringPSP.CancelPixCharge(ctx, req)
}

// A merchant cancelling a cycle's charge (POST /v1/payments/{id}/cancel)
// asks the acquirer to cancel no cob: the charge has none, its txid is the
// cycle's cobr's, which the cycle cancels itself.
func TestCancellingACycleChargeCancelsNoCob(t *testing.T) {
	t.Parallel()
	r := newSubRig(t, testenv.SQLiteDSN(t))
	psp := &cobCancels{recurringPSP: r.psp}
	svc := r.process()
	id := r.authorized(svc)
	if _, err := svc.RunSubscriptions(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs := r.charges(id)
	if len(cs) != 1 {
		t.Fatalf("%d charges, want cycle 1's", len(cs))
	}
	once := exactlyonce.NewDatabaseChecked(r.db, idempotency.NewMemory(r.clock.Now), r.clock, app.RandomIDs{}, discard(), exactlyonce.Config{})
	charges := app.NewChargeService(r.db, once, psp, nil, r.clock, app.RandomIDs{}, discard(), app.ChargesConfig{})
	pay := app.NewPaymentService(charges, r.db, r.db, psp, r.clock, app.RandomIDs{}, discard(), app.PaymentsConfig{})
	c, err := pay.Cancel(context.Background(), r.caller, cs[0].ID())
	if err != nil {
		t.Fatal(err)
	}
	if c.Status() != domain.TxCancelled {
		t.Fatalf("status %s, want cancelled", c.Status())
	}
	if n := psp.n.Load(); n != 0 {
		t.Errorf("the acquirer was asked to cancel %d cobs for a cycle's charge", n)
	}
}
