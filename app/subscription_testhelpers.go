package app

import (
	"context"
	"fmt"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// The subscription test helpers play the payer and the payer's bank in
// test mode, as the sandbox acquirer's counterpart: they answer the
// mandate and run debits, and the outcomes are applied exactly as an
// acquirer's notification would be. They never move the server's clock.

// AuthorizeTest is the payer authorising a test-mode subscription's
// mandate. For qr_code_with_first_payment the payer scans the composite
// code: the sandbox bank pays the first payment's charge (unless it is
// paid already), then the mandate is authorised.
func (s *SubscriptionService) AuthorizeTest(ctx context.Context, sim ports.PaymentSimulator, caller Caller, id string) (*domain.Subscription, error) {
	sub, err := s.testSubscription(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if sub.Status() != domain.SubscriptionPendingAuthorization {
		return nil, domain.ErrSubscriptionNotPending
	}
	if first := sub.FirstChargeID(); first != "" {
		c, err := s.charges.Get(ctx, caller, first)
		if err != nil {
			return nil, err
		}
		if c.Status().Open() {
			payer := sub.Payer()
			if _, err := s.charges.SimulatePayment(ctx, sim, caller, first, PayInput{PayerDocument: payer.Document, PayerName: payer.Name}); err != nil {
				return nil, fmt.Errorf("pay the first payment: %w", err)
			}
		}
	}
	return s.authorize(ctx, caller.Scope(), id)
}

// RejectTest is the payer refusing a test-mode subscription's mandate.
func (s *SubscriptionService) RejectTest(ctx context.Context, caller Caller, id string) (*domain.Subscription, error) {
	if _, err := s.testSubscription(ctx, caller, id); err != nil {
		return nil, err
	}
	return s.reject(ctx, caller.Scope(), id)
}

// RevokeTest is the payer revoking an active test-mode subscription's
// mandate at its bank: cancelled by the payer, no further cycle; open
// cycles are cancelled with their charges.
func (s *SubscriptionService) RevokeTest(ctx context.Context, caller Caller, id string) (*domain.Subscription, error) {
	sub, err := s.testSubscription(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if sub.Status() != domain.SubscriptionActive {
		return nil, domain.ErrSubscriptionNotActive
	}
	return s.cancel(ctx, caller.Scope(), id, domain.CancelledByPayer)
}

// AdvanceTest moves an active test-mode subscription to its next cycle
// and has the sandbox bank run that cycle's debit now: the open cycle
// with the lowest number (its first debit, or the retry a failure
// scheduled); without one, the next cycle of the schedule, whose charge
// is created first whatever its window (the same creation, under the same
// cobr, as the worker's). The debit is paid unless fail, in which case it
// is rejected and the retry policy decides. The cycle keeps its dates;
// the debit and its Pix are made at the server's clock.
func (s *SubscriptionService) AdvanceTest(ctx context.Context, sim ports.PaymentSimulator, caller Caller, id string, fail bool) (*domain.Subscription, error) {
	sub, err := s.testSubscription(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if sub.Status() != domain.SubscriptionActive {
		return nil, domain.ErrSubscriptionNotActive
	}
	rs, ok := sim.(ports.RecurringSimulator)
	if !ok {
		return nil, ErrRecurringNotSupported
	}
	scope := caller.Scope()
	c, err := s.openCycle(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	if c == nil {
		spec, err := sub.NextCycleSpec(domain.BrasiliaDate(s.clock.Now()), true)
		if err != nil {
			return nil, err
		}
		if err := s.scheduleCycle(ctx, scope, sub, spec); err != nil {
			return nil, err
		}
		if c, err = s.store.GetCycle(ctx, scope, id, spec.Cycle); err != nil {
			return nil, err
		}
	}
	if a, ok := c.PendingDebit(); ok && a.Kind == domain.AttemptRetry && a.Status == domain.AttemptRequested {
		if err := s.requestRetry(ctx, scope, id, c.Number()); err != nil {
			return nil, err
		}
	}
	payer := sub.Payer()
	res, err := rs.SimulateRecurringDebit(ctx, ports.SimulateDebitRequest{Scope: scope, TxID: c.TxID(), Amount: c.Amount(),
		PayerTaxID: payer.Document, PayerName: payer.Name, Fail: fail})
	if err != nil {
		return nil, fmt.Errorf("simulate the debit: %w", err)
	}
	if res.Paid == nil {
		err = s.debitFailed(ctx, scope, id, c.Number(), bizdays.Date{}, res.RejectCode, false)
	} else {
		var settled Settled
		if settled, err = s.charges.ApplyPixPayment(ctx, scope, c.ChargeID(), *res.Paid); err == nil {
			err = s.syncCycle(ctx, scope, id, c.Number(), settled.Charge, "")
		}
	}
	if err != nil {
		return nil, err
	}
	return s.store.GetSubscription(ctx, scope, id)
}

// openCycle is the subscription's open cycle with the lowest number, nil
// when none is open.
func (s *SubscriptionService) openCycle(ctx context.Context, scope ports.Scope, id string) (*domain.Cycle, error) {
	cycles, err := s.store.ListCycles(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	for _, c := range cycles {
		if c.Status().Open() {
			return c, nil
		}
	}
	return nil, nil
}

// testSubscription reads a subscription for a test helper: test mode
// only (ErrTestModeOnly answers 404, as if the route did not exist).
func (s *SubscriptionService) testSubscription(ctx context.Context, caller Caller, id string) (*domain.Subscription, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ErrTestModeOnly
	}
	sub, err := s.Get(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if s.acquirer.recurring == nil {
		return nil, ErrRecurringNotSupported
	}
	return sub, nil
}
