package app_test

import (
	"context"
	"errors"
	"fmt"
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

// refundingSandbox is the sandbox, counting the refunds it is asked to
// start.
type refundingSandbox struct {
	*sandbox.Acquirer
	starts atomic.Int32
}

func (s *refundingSandbox) Refund(ctx context.Context, req ports.RefundRequest) (string, error) {
	s.starts.Add(1)
	return s.Acquirer.Refund(ctx, req)
}

// dyingSteps is the real store whose charge updates "die" before their
// commit while dead is set: the refund worker's writes roll back after the
// acquirer was asked.
type dyingSteps struct {
	*store.DB
	dead atomic.Bool
}

func (d *dyingSteps) UpdateCharges(ctx context.Context, refs []ports.ChargeRef, fn ports.ChargeChangeFunc) ([]error, error) {
	if d.dead.Load() {
		return nil, errDied
	}
	return d.DB.UpdateCharges(ctx, refs, fn)
}

func (d *dyingSteps) UpdateCharge(ctx context.Context, scope ports.Scope, id string, fn ports.ChargeChangeFunc) error {
	if d.dead.Load() {
		return errDied
	}
	return d.DB.UpdateCharge(ctx, scope, id, fn)
}

// TestSandboxCashoutRefundSendsOnePix: a cashout refund on the sandbox is
// a Pix out through its PixSender, under the send id derived from the
// refund. The sandbox accepts it, the process dies before the refund's
// step commits, a new process's worker starts the refund again once the
// lease ends: one Pix, the refund REFUNDED once, the ledger clean.
func TestSandboxCashoutRefundSendsOnePix(t *testing.T) {
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
	clock := testkit.NewClock(time.Time{})
	sb := &refundingSandbox{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock)}
	dying := &dyingSteps{DB: db}
	caller := app.Caller{Account: domain.Account{ID: "acct_cashout", MerchantName: "Loja", MerchantCity: "SAO PAULO"}, Mode: domain.ModeTest}
	process := func() *app.PaymentService {
		charges := app.NewChargeService(db, checked(db, idempotency.NewMemory(clock.Now), clock), sb, nil, clock, app.RandomIDs{}, discard(),
			app.ChargesConfig{})
		return app.NewPaymentService(charges, dying, dying, sb, clock, app.RandomIDs{}, discard(), app.PaymentsConfig{})
	}
	first := process()
	resp, err := first.Charges().Create(ctx, caller, app.CreateChargeInput{Amount: 10000, Currency: "BRL",
		Methods: []domain.Method{domain.MethodPix}}, app.Idempotency{Key: "cashout-charge", Fingerprint: "f"},
		func(c *domain.Charge) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(c.ID())}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	chargeID := string(resp.Body)
	if _, err := first.Transition(ctx, caller, chargeID, domain.TxPaid, domain.MethodPix); err != nil {
		t.Fatal(err)
	}
	amount := int64(4000)
	resp, err = first.Refund(ctx, caller, chargeID, app.RefundInput{Amount: &amount, Strategy: domain.StrategyCashout,
		DestinationKey: "maria@example.com", PassFeeToTenant: true}, app.Idempotency{Key: "cashout-refund", Fingerprint: "r"},
		func(r domain.Refund) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(r.ID)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	refundID := string(resp.Body)

	dying.dead.Store(true)
	if _, err := first.AdvanceRefunds(ctx); !errors.Is(err, errDied) {
		t.Fatalf("first pass: %v, want the simulated death", err)
	}
	if n := len(sb.Sends()); n != 1 {
		t.Fatalf("%d Pix sent by the first pass, want 1", n)
	}
	dying.dead.Store(false)
	second := process()
	clock.Advance(6 * time.Second) // past the first pass's lease
	if _, err := second.AdvanceRefunds(ctx); err != nil {
		t.Fatal(err)
	}
	if sb.starts.Load() != 2 {
		t.Errorf("the refund was started %d times, want 2 (the first pass, the retry)", sb.starts.Load())
	}
	sends := sb.Sends()
	want := ports.PixSendRequest{Scope: caller.Scope(), SendID: domain.RefundSendID(caller.Account.ID, refundID), Amount: amount,
		Key: domain.PixKey{Type: domain.PixKeyEmail, Value: "maria@example.com"}, Description: "devolução"}
	if len(sends) != 1 || sends[0] != want {
		t.Fatalf("Pix sent: %+v, want one %+v", sends, want)
	}
	refunds, err := second.ListRefunds(ctx, caller, chargeID)
	if err != nil || len(refunds) != 1 || refunds[0].Status != domain.RefundRefunded {
		t.Fatalf("refunds: %+v %v", refunds, err)
	}
	tot, err := db.LedgerTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	problems := domain.VerifyLedger(tot.Unbalanced, tot.Posted, tot.Stored, tot.Held)
	more, err := db.VerifyDerived(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if problems = append(problems, more...); len(problems) > 0 {
		t.Errorf("ledger verify: %v", problems)
	}
}

// unroutableSandbox is the sandbox that finds no Pix key for any refund.
type unroutableSandbox struct{ *sandbox.Acquirer }

func (unroutableSandbox) Refund(context.Context, ports.RefundRequest) (string, error) {
	return "", fmt.Errorf("%w: no destinationKey and no payer document", ports.ErrRefundUnroutable)
}

// A refund the acquirer can route nowhere (a cashout with no Pix key and
// no payer document) fails at the worker's first pass and its money
// returns, instead of staying PENDING while every pass retries it.
func TestUnroutableRefundFails(t *testing.T) {
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
	clock := testkit.NewClock(time.Time{})
	sb := unroutableSandbox{sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock)}
	charges := app.NewChargeService(db, checked(db, idempotency.NewMemory(clock.Now), clock), sb, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{})
	svc := app.NewPaymentService(charges, db, db, sb, clock, app.RandomIDs{}, discard(), app.PaymentsConfig{})
	caller := app.Caller{Account: domain.Account{ID: "acct_unroutable", MerchantName: "Loja", MerchantCity: "SAO PAULO"}, Mode: domain.ModeTest}
	resp, err := charges.Create(ctx, caller, app.CreateChargeInput{Amount: 5000, Currency: "BRL",
		Methods: []domain.Method{domain.MethodPix}}, app.Idempotency{Key: "unroutable-charge", Fingerprint: "f"},
		func(c *domain.Charge) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(c.ID())}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	chargeID := string(resp.Body)
	if _, err := svc.Transition(ctx, caller, chargeID, domain.TxPaid, domain.MethodPix); err != nil {
		t.Fatal(err)
	}
	refund := func(key string) (app.Response, error) {
		return svc.Refund(ctx, caller, chargeID, app.RefundInput{}, app.Idempotency{Key: key, Fingerprint: key},
			func(r domain.Refund) (app.Response, error) {
				return app.Response{StatusCode: 201, Body: []byte(r.ID)}, nil
			})
	}
	if _, err := refund("unroutable-refund"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AdvanceRefunds(ctx); err != nil {
		t.Fatal(err)
	}
	refunds, err := svc.ListRefunds(ctx, caller, chargeID)
	if err != nil || len(refunds) != 1 || refunds[0].Status != domain.RefundFailed {
		t.Fatalf("refunds after one pass: %+v %v, want one FAILED", refunds, err)
	}
	// The whole amount is refundable again: the failed refund released it.
	if _, err := refund("second-refund"); err != nil {
		t.Fatalf("a full refund after the failed one: %v", err)
	}
	if problems, err := db.VerifyDerived(ctx); err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v %v", problems, err)
	}
}
