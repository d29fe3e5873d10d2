package app

import (
	"context"
	"crypto/rand"

	"github.com/quitapix/quita/domain"
)

// FailRefund is the test helper that forces an open refund to FAILED.
func (s *PaymentService) FailRefund(ctx context.Context, caller Caller, refundID string) (domain.Refund, error) {
	if caller.Mode != domain.ModeTest {
		return domain.Refund{}, ErrTestModeOnly
	}
	r, err := s.store.FindRefund(ctx, caller.Scope(), refundID)
	if err != nil {
		return domain.Refund{}, err
	}
	if err := s.stepRefund(ctx, caller.Scope(), r.ChargeID, r.ID, domain.RefundFailed, ""); err != nil {
		return domain.Refund{}, err
	}
	out, err := s.store.FindRefund(ctx, caller.Scope(), refundID)
	if err != nil {
		return domain.Refund{}, err
	}
	return *out, nil
}

// Transition is the test helper that drives a transaction status.
func (s *PaymentService) Transition(ctx context.Context, caller Caller, id string, to domain.TxStatus, paidWith domain.Method) (*domain.Charge, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ErrTestModeOnly
	}
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	e2e, err := domain.NewEndToEndID("99999999", now, rand.Reader)
	if err != nil {
		return nil, err
	}
	fees, err := s.charges.feesFor(ctx, caller.Account.ID)
	if err != nil {
		return nil, err
	}
	return s.charges.update(ctx, caller.Scope(), id, func(c *domain.Charge) error {
		return c.Transition(to, paidWith, fees, e2e, now)
	})
}

// ExpireTestCharge is the expire test helper: it closes an open test-mode
// charge now.
func (s *ChargeService) ExpireTestCharge(ctx context.Context, caller Caller, id string) (*domain.Charge, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ErrTestModeOnly
	}
	return s.expire(ctx, caller.Scope(), id, s.clock.Now())
}
