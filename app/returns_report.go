package app

import (
	"context"
	"fmt"

	"github.com/quitapix/quita/domain"
)

// reportReturn logs and counts a recorded step. Nothing of the payer is
// logged: the return holds no payer data.
func (s *ChargeService) reportReturn(ctx context.Context, before, after domain.PixReturn) {
	attrs := []any{"charge", domain.PrefixCharge + after.ChargeID, "account", after.AccountID, "mode", string(after.Mode),
		"end_to_end_id", after.EndToEndID, "reason", string(after.Reason), "amount", after.Amount}
	switch {
	case after.Status == domain.PixReturnReturned:
		s.returns.confirmed.Add(1)
		s.log.InfoContext(ctx, "automatic return confirmed by the payer's bank", append(attrs, "attempt", after.Attempt)...)
	case after.Status == domain.PixReturnFailed:
		s.returns.refused.Add(1)
		s.returns.surfaced.Add(1)
		s.log.ErrorContext(ctx, "automatic return refused on every attempt: an operator must return the money (quitad returns)",
			append(attrs, "attempts", after.Attempt, "failure", after.Failure)...)
	case after.Attempt > before.Attempt:
		s.returns.refused.Add(1)
		s.log.WarnContext(ctx, "automatic return refused by the payer's bank; retrying under a new devolução id",
			append(attrs, "attempt", before.Attempt, "next_attempt", after.Attempt, "failure", after.Failure)...)
	default:
		s.log.InfoContext(ctx, "automatic return accepted by the acquirer", append(attrs, "attempt", after.Attempt)...)
	}
}

// returnDescription is the devolução's descrição at the acquirer.
func returnDescription(r domain.PixReturnReason) string {
	switch r {
	case domain.ReturnForPayerMismatch:
		return "payer does not match the charge's expected payer"
	case domain.ReturnForWrongAmount:
		return "amount differs from the charge amount"
	case domain.ReturnForClosedCharge:
		return "the charge is no longer payable"
	case domain.ReturnForCancelledHold:
		return "the charge was cancelled"
	}
	return "automatic return"
}

// PixReturns lists up to limit automatic returns of status, in every
// account, oldest first: `quitad returns` shows an operator the FAILED
// ones, whose money only they can give back.
func (s *ChargeService) PixReturns(ctx context.Context, status domain.PixReturnStatus, limit int) ([]domain.PixReturn, error) {
	switch status {
	case domain.PixReturnRequested, domain.PixReturnInProgress, domain.PixReturnReturned, domain.PixReturnFailed:
	default:
		return nil, fmt.Errorf("unknown return status %q: REQUESTED, IN_PROGRESS, RETURNED or FAILED", string(status))
	}
	return s.store.ListPixReturns(ctx, status, max(limit, 1))
}
