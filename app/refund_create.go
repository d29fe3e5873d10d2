package app

import (
	"context"
	"errors"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// RefundInput is a refund request after decoding.
type RefundInput struct {
	Amount          *int64
	Reason          string
	Strategy        domain.RefundStrategy
	PassFeeToTenant bool
	DestinationKey  string
}

// Refund creates a refund exactly once per idempotency key: the key's
// record, the refund, its ledger debit and the reservation on the charge
// are written in one transaction under the charge's row lock, so
// concurrent refunds can never exceed the amount.
func (s *PaymentService) Refund(ctx context.Context, caller Caller, id string, in RefundInput, idem Idempotency, respond Respond[domain.Refund]) (Response, error) {
	key := ports.IdempotencyKey{Scope: caller.Scope(), Key: idem.Key}
	if resp, err := s.charges.replay(ctx, key, idem.Fingerprint); err == nil || !errors.Is(err, ports.ErrNotFound) {
		return resp, err
	}
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return Response{}, err
	}
	var (
		answer   Response
		computed bool
		err      error
	)
	// The wallet is read without a lock; the store refuses a debit that a
	// concurrent one made stale (ErrInsufficientBalance after the entry was
	// computed from a sufficient read), and a fresh read decides again.
	for range 5 {
		computed = false
		err = s.cstore.UpdateCharge(ctx, caller.Scope(), id, s.refundChange(in, idem, key, respond, &answer, &computed))
		if !computed || !errors.Is(err, domain.ErrInsufficientBalance) {
			break
		}
	}
	if errors.Is(err, ports.ErrIdempotencyKeyExists) {
		return s.charges.replay(ctx, key, idem.Fingerprint)
	}
	if err != nil {
		return Response{}, err
	}
	select {
	case s.refundsWake <- struct{}{}:
	default: // a wake-up is already pending
	}
	return Response{StatusCode: answer.StatusCode, Body: answer.Body}, nil
}

// refundChange is the change of one refund attempt.
func (s *PaymentService) refundChange(in RefundInput, idem Idempotency, key ports.IdempotencyKey, respond Respond[domain.Refund],
	answer *Response, computed *bool,
) ports.ChargeChangeFunc {
	return func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		now := s.clock.Now()
		amount := c.RefundableAmount()
		if in.Amount != nil {
			amount = *in.Amount
		}
		st := c.Settlement()
		if st == nil || !c.Status().Settled() {
			return ports.ChargeChange{}, domain.ErrChargeNotRefundable
		}
		strategy := in.Strategy
		if st.PaidWith == domain.MethodPix && strategy == "" {
			strategy = domain.StrategyCashout
		}
		if st.PaidWith == domain.MethodPix && strategy == domain.StrategyCashout && !s.acquirer.supportsCashout(key.Scope) {
			if in.Strategy != "" {
				return ports.ChargeChange{}, ErrCashoutNotSupported
			}
			strategy = domain.StrategyDevolution // the provider's only way back
		}
		if st.PaidWith != domain.MethodPix && strategy != "" {
			return ports.ChargeChange{}, domain.Invalid(domain.FieldRefundStrategy,
				"%s applies to PIX refunds only", domain.FieldRefundStrategy)
		}
		if err := c.ReserveRefund(amount, now); err != nil {
			return ports.ChargeChange{}, err
		}
		rid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		r := domain.Refund{ID: rid, ChargeID: c.ID(), AccountID: c.AccountID(), Mode: c.Mode(), Amount: amount,
			Currency: c.Currency(), Status: domain.RefundPending, Reason: in.Reason, Strategy: strategy,
			PassFeeToTenant: in.PassFeeToTenant, DestinationKey: in.DestinationKey, EndToEndID: st.EndToEndID,
			CreatedAt: now, UpdatedAt: now}
		if strategy == domain.StrategyCashout && in.PassFeeToTenant {
			r.Fee = s.cfg.PixOutFee.Of(amount)
		}
		bal, err := tx.Balance(ctx, c.Currency())
		if err != nil {
			return ports.ChargeChange{}, err
		}
		eid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		entry, err := domain.RefundEntry(eid, r, bal, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		*computed = true
		evid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		ev, err := domain.RefundEvent(c, r, evid, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		if *answer, err = respond(r); err != nil {
			return ports.ChargeChange{}, err
		}
		return ports.ChargeChange{Events: []domain.Event{ev}, Entries: []domain.JournalEntry{entry}, Refunds: []domain.Refund{r},
			Idempotency: &ports.IdempotencyRecord{IdempotencyKey: key, Fingerprint: idem.Fingerprint, ResourceID: rid,
				StatusCode: answer.StatusCode, Body: answer.Body, CreatedAt: now}}, nil
	}
}
