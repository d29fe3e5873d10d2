package app

import (
	"context"
	"errors"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ListRefunds returns a payment's refunds, newest first.
func (s *PaymentService) ListRefunds(ctx context.Context, caller Caller, id string) ([]domain.Refund, error) {
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	return s.store.ListRefunds(ctx, caller.Scope(), id)
}

// AdvanceRefunds moves every open refund one step with the acquirer:
// PENDING → IN_PROGRESS once the acquirer accepted it, IN_PROGRESS →
// REFUNDED or FAILED as the acquirer reports. Each step is written with
// its payment.refunded event and ledger entry under the charge's lock;
// safe in every process at once.
func (s *PaymentService) AdvanceRefunds(ctx context.Context) (int, error) {
	refs, err := s.store.ListOpenRefunds(ctx, workerBatch)
	if err != nil {
		return 0, err
	}
	ra := s.acquirer.refunds
	if ra == nil {
		return 0, nil
	}
	n := 0
	for _, ref := range refs {
		r, err := s.store.FindRefund(ctx, ref.Scope, ref.RefundID)
		if err != nil {
			return n, err
		}
		switch r.Status {
		case domain.RefundPending:
			c, err := s.cstore.GetCharge(ctx, ref.Scope, r.ChargeID)
			if err != nil {
				return n, err
			}
			method := domain.MethodPix
			if st := c.Settlement(); st != nil {
				method = st.PaidWith
			}
			pref, err := ra.Refund(ctx, ports.RefundRequest{Scope: ref.Scope, ChargeID: r.ChargeID, RefundID: r.ID, Method: method,
				Strategy: r.Strategy, EndToEndID: r.EndToEndID, Amount: r.Amount, DestinationKey: r.DestinationKey})
			if err != nil {
				s.log.WarnContext(ctx, "refund not accepted yet; will retry", "refund", domain.PrefixRefund+r.ID, "err", err)
				continue
			}
			err = s.stepRefund(ctx, ref.Scope, r.ChargeID, r.ID, domain.RefundInProgress, pref)
			if err != nil && !errors.Is(err, domain.ErrRefundNotOpen) && !errors.Is(err, domain.ErrInvalidTransition) {
				return n, err
			}
		case domain.RefundInProgress:
			st, err := ra.RefundStatus(ctx, r.ProviderRef)
			if err != nil {
				continue
			}
			to := domain.RefundStatus(st)
			if to != domain.RefundRefunded && to != domain.RefundFailed {
				continue
			}
			err = s.stepRefund(ctx, ref.Scope, r.ChargeID, r.ID, to, "")
			if err != nil && !errors.Is(err, domain.ErrRefundNotOpen) && !errors.Is(err, domain.ErrInvalidTransition) {
				return n, err
			}
		}
		n++
	}
	return n, nil
}

// stepRefund moves a refund to status to under its charge's lock, with
// the ledger entry and charge change the step implies.
func (s *PaymentService) stepRefund(ctx context.Context, scope ports.Scope, chargeID, refundID string, to domain.RefundStatus, providerRef string) error {
	return s.cstore.UpdateCharge(ctx, scope, chargeID, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		r, err := tx.GetRefund(ctx, refundID)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		now := s.clock.Now()
		if err := r.Advance(to, now); err != nil {
			return ports.ChargeChange{}, err
		}
		if providerRef != "" {
			r.ProviderRef = providerRef
		}
		var ch ports.ChargeChange
		prev := c.Status()
		eid, err := s.ids.NewID()
		if err != nil {
			return ch, err
		}
		switch to {
		case domain.RefundRefunded:
			if err := c.CompleteRefund(r.Amount, now); err != nil {
				return ch, err
			}
			ch.Entries = append(ch.Entries, domain.RefundSettledEntry(eid, *r, now))
		case domain.RefundFailed:
			if err := c.ReleaseRefund(r.Amount, now); err != nil {
				return ch, err
			}
			ch.Entries = append(ch.Entries, domain.RefundFailedEntry(eid, *r, now))
		}
		evid, err := s.ids.NewID()
		if err != nil {
			return ch, err
		}
		ev, err := domain.RefundEvent(c, *r, evid, now)
		if err != nil {
			return ch, err
		}
		ch.Events = append(ch.Events, ev)
		if c.Status() != prev {
			evs, err := domain.NewChargeEvents(c, prev, transitionWithoutRefundDuplicate(prev, c.Status()), s.cfg.Links, s.ids.NewID, now)
			if err != nil {
				return ch, err
			}
			ch.Events = append(ch.Events, evs...)
		}
		ch.Refunds = []domain.Refund{*r}
		return ch, nil
	})
}

// transitionWithoutRefundDuplicate drops payment.refunded from a full
// refund's transition events: the refund step already announced it.
func transitionWithoutRefundDuplicate(from, to domain.TxStatus) []domain.EventType {
	var out []domain.EventType
	for _, t := range domain.TransitionEvents(from, to) {
		if t != domain.EventPaymentRefunded {
			out = append(out, t)
		}
	}
	return out
}
