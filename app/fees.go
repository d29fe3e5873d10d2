package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/quitapix/quita/domain"
)

// SetAccountFee overrides one method's fees for an account (operators:
// `quitad fees set`).
func (s *PaymentService) SetAccountFee(ctx context.Context, accountID string, m domain.Method, f domain.FeeSchedule) error {
	if !m.Valid() && m != domain.FeeKeyPixOut {
		return domain.Invalid(domain.FieldFeeMethod, "unknown payment method (or PIX_OUT, the payout fee)")
	}
	for _, fee := range []domain.Fee{f.Provider, f.Platform} {
		if err := fee.Validate(); err != nil {
			return err
		}
	}
	return s.charges.putAccountFee(ctx, accountID, m, f)
}

// AccountFees is the effective schedule of an account.
func (s *PaymentService) AccountFees(ctx context.Context, accountID string) (map[domain.Method]domain.FeeSchedule, error) {
	return s.charges.feesFor(ctx, accountID)
}

// feesFor is the fee schedule of an account: the configured schedule with
// the account's overrides on top. A failure to read the overrides fails
// the settlement rather than charge the wrong fee.
func (s *ChargeService) feesFor(ctx context.Context, accountID string) (map[domain.Method]domain.FeeSchedule, error) {
	if s.cfg.AccountFees == nil {
		return s.cfg.Fees, nil
	}
	over, err := s.cfg.AccountFees.AccountFees(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("account fees: %w", err)
	}
	if len(over) == 0 {
		return s.cfg.Fees, nil
	}
	out := make(map[domain.Method]domain.FeeSchedule, len(s.cfg.Fees)+len(over))
	for m, f := range s.cfg.Fees {
		out[m] = f
	}
	for m, f := range over {
		out[m] = f
	}
	return out, nil
}

// pixOutSchedule is the account's Pix-out fee schedule, the one payouts
// and cashout refunds are charged by: its PIX_OUT override (`quitad fees
// set --method PIX_OUT`) when it has one, else def (QUITA_FEE_PIX_OUT) as
// the platform's part.
func (s *ChargeService) pixOutSchedule(ctx context.Context, accountID string, def domain.Fee) (domain.FeeSchedule, error) {
	fees, err := s.feesFor(ctx, accountID)
	if err != nil {
		return domain.FeeSchedule{}, err
	}
	if over, ok := fees[domain.FeeKeyPixOut]; ok {
		return over, nil
	}
	return domain.FeeSchedule{Platform: def}, nil
}

// putAccountFee stores an account's override of one method's fees; the
// settlements that follow read it (feesFor).
func (s *ChargeService) putAccountFee(ctx context.Context, accountID string, m domain.Method, f domain.FeeSchedule) error {
	if s.cfg.AccountFees == nil {
		return errors.New("account fees are not configured")
	}
	return s.cfg.AccountFees.PutAccountFee(ctx, accountID, m, f, s.clock.Now())
}
