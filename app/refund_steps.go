package app

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

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

// refundLease is how long a claimed refund belongs to one worker: a
// refund the acquirer is still working on is looked at again when it ends.
const refundLease = 2 * time.Second

// refundConcurrency bounds the refunds one AdvanceRefunds call drives at
// once (their acquirer calls are network waits).
const refundConcurrency = 16

// AdvanceRefunds claims open refunds (a lease every process respects, so
// processes share the work) and drives each as far as the acquirer allows
// in one go: PENDING → IN_PROGRESS once the acquirer accepted it, then at
// once IN_PROGRESS → REFUNDED or FAILED when the acquirer already reports
// the outcome. Each step is written with its payment.refunded event and
// ledger entry under the charge's lock; a step another worker made first
// is skipped. Safe in every process at once.
func (s *PaymentService) AdvanceRefunds(ctx context.Context) (int, error) {
	ra := s.acquirer.refunds
	if ra == nil {
		return 0, nil
	}
	now := s.clock.Now()
	refs, err := s.store.ClaimOpenRefunds(ctx, now, now.Add(refundLease), workerBatch)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, refundConcurrency)
	)
	for _, ref := range refs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.driveRefund(ctx, ra, ref); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return len(refs), firstErr
}

// driveRefund takes one refund through every step the acquirer allows
// now.
func (s *PaymentService) driveRefund(ctx context.Context, ra ports.RefundAcquirer, ref ports.RefundRef) error {
	r, err := s.store.FindRefund(ctx, ref.Scope, ref.RefundID)
	if err != nil {
		return err
	}
	stepped := func(err error) error {
		if errors.Is(err, domain.ErrRefundNotOpen) || errors.Is(err, domain.ErrInvalidTransition) {
			return nil // another worker made the step first
		}
		return err
	}
	providerRef := r.ProviderRef
	if r.Status == domain.RefundPending {
		c, err := s.cstore.GetCharge(ctx, ref.Scope, r.ChargeID)
		if err != nil {
			return err
		}
		method := domain.MethodPix
		if st := c.Settlement(); st != nil {
			method = st.PaidWith
		}
		pref, err := ra.Refund(ctx, ports.RefundRequest{Scope: ref.Scope, ChargeID: r.ChargeID, RefundID: r.ID, Method: method,
			Strategy: r.Strategy, EndToEndID: r.EndToEndID, Amount: r.Amount, DestinationKey: r.DestinationKey})
		if err != nil {
			s.log.WarnContext(ctx, "refund not accepted yet; will retry", "refund", domain.PrefixRefund+r.ID, "err", err)
			return nil
		}
		if err := stepped(s.stepRefund(ctx, ref.Scope, r.ChargeID, r.ID, domain.RefundInProgress, pref)); err != nil {
			return err
		}
		providerRef = pref
	} else if r.Status != domain.RefundInProgress {
		return nil
	}
	st, err := ra.RefundStatus(ctx, providerRef)
	if err != nil {
		return nil // asked again when the lease ends
	}
	to := domain.RefundStatus(st)
	if to != domain.RefundRefunded && to != domain.RefundFailed {
		return nil
	}
	return stepped(s.stepRefund(ctx, ref.Scope, r.ChargeID, r.ID, to, ""))
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
