package app

import (
	"cmp"
	"context"
	"errors"
	"slices"
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

// refundLease is how long a claimed refund belongs to one worker: long
// enough for one chunk to be asked about and written on a loaded machine,
// short enough that the refunds of a process that died are taken over
// within seconds. A refund the acquirer is still working on is looked at
// again when its lease ends.
const refundLease = 5 * time.Second

// refundConcurrency bounds the acquirer calls one AdvanceRefunds call
// makes at once (they are network waits with a real acquirer).
const refundConcurrency = 16

// refundChunk is how many refunds one claim takes, and so the most
// charges whose refund steps one transaction writes.
const refundChunk = 64

// refundPlan is what the acquirer said of one claimed refund: the steps
// to write, in order.
type refundPlan struct {
	ref         ports.OpenRefund
	providerRef string
	steps       []domain.RefundStatus
}

// refundLanes is how many chunks one process drives at once: while one
// chunk waits on its commit, another is claimed, asked about and written.
const refundLanes = 4

// AdvanceRefunds drives open refunds, a chunk at a time in each of
// refundLanes lanes (up to workerBatch per call): a lane claims
// refundChunk of them (a lease every process respects, so lanes and
// processes share the work; each chunk's lease starts when it is claimed),
// asks the acquirer about each (refundConcurrency calls at once): PENDING
// → IN_PROGRESS once the acquirer accepted it, and IN_PROGRESS → REFUNDED
// or FAILED when it already reports the outcome; then writes the chunk's
// steps in one transaction, each with its payment.refunded event and
// ledger entry under its charge's lock, so a pass costs a commit per
// chunk, not two per refund. A step another worker made first is skipped.
// Safe in every process at once.
func (s *PaymentService) AdvanceRefunds(ctx context.Context) (int, error) {
	ra := s.acquirer.refunds
	if ra == nil {
		return 0, nil
	}
	var (
		mu       sync.Mutex
		handled  int
		firstErr error
		wg       sync.WaitGroup
	)
	// take reserves up to a chunk of the call's budget (0 when spent).
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := min(refundChunk, workerBatch-handled)
		handled += n
		return n
	}
	// A lane opens the next one only after a full claim, so an idle
	// process makes one claim per poll.
	lanes := 0
	var lane func()
	lane = func() {
		for limit := take(); limit > 0 && ctx.Err() == nil; limit = take() {
			n, err := s.advanceRefundChunk(ctx, ra, limit)
			mu.Lock()
			handled -= limit - n // give back what was not claimed
			firstErr = cmp.Or(firstErr, err)
			more := n == limit && lanes < refundLanes
			if more {
				lanes++
			}
			mu.Unlock()
			if more {
				wg.Go(lane)
			}
			if n < limit {
				return // nothing more to claim now
			}
		}
	}
	lanes = 1
	wg.Go(lane)
	wg.Wait()
	return handled, firstErr
}

// advanceRefundChunk claims up to limit refunds and drives them.
func (s *PaymentService) advanceRefundChunk(ctx context.Context, ra ports.RefundAcquirer, limit int) (int, error) {
	now := s.clock.Now()
	refs, err := s.store.ClaimOpenRefunds(ctx, now, now.Add(refundLease), limit)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	plans := make([]refundPlan, len(refs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, refundConcurrency)
	for i, ref := range refs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			plans[i] = s.planRefund(ctx, ra, ref)
		})
	}
	wg.Wait()
	// One charge's refunds go in the same change.
	byCharge := map[string][]refundPlan{}
	var charges []ports.ChargeRef
	for _, p := range plans {
		if len(p.steps) == 0 {
			continue
		}
		id := p.ref.ChargeID
		if byCharge[id] == nil {
			charges = append(charges, ports.ChargeRef{Scope: p.ref.Scope(), ID: id})
		}
		byCharge[id] = append(byCharge[id], p)
	}
	if len(charges) == 0 {
		return len(refs), nil
	}
	return len(refs), s.writeRefundSteps(ctx, charges, byCharge)
}

// planRefund asks the acquirer about one claimed refund: it starts a
// PENDING one (the acquirer takes the refund id as its idempotency key, so
// a refund started before a crash is not started twice) and asks how a
// started one stands.
func (s *PaymentService) planRefund(ctx context.Context, ra ports.RefundAcquirer, ref ports.OpenRefund) refundPlan {
	p := refundPlan{ref: ref, providerRef: ref.ProviderRef}
	switch ref.Status {
	case domain.RefundPending:
		pref, err := ra.Refund(ctx, ports.RefundRequest{Scope: ref.Scope(), ChargeID: ref.ChargeID, RefundID: ref.ID,
			Method: cmp.Or(ref.PaidWith, domain.MethodPix), Strategy: ref.Strategy, EndToEndID: ref.EndToEndID,
			Amount: ref.Amount, DestinationKey: ref.DestinationKey, PayerTaxID: ref.PayerTaxID})
		if errors.Is(err, ports.ErrRefundUnroutable) {
			// Nowhere to send it, now or later: it fails and its money
			// returns to the wallet, rather than waiting forever.
			s.log.WarnContext(ctx, "refund has no Pix key to go to; failing it", "refund", domain.PrefixRefund+ref.ID)
			p.steps = append(p.steps, domain.RefundFailed)
			return p
		}
		if err != nil {
			s.log.WarnContext(ctx, "refund not accepted yet; will retry", "refund", domain.PrefixRefund+ref.ID, "err", err)
			return p
		}
		p.providerRef = pref
		p.steps = append(p.steps, domain.RefundInProgress)
	case domain.RefundInProgress:
	default:
		return p
	}
	st, err := ra.RefundStatus(ctx, p.providerRef)
	if err != nil {
		return p // asked again when the lease ends
	}
	if to := domain.RefundStatus(st); to == domain.RefundRefunded || to == domain.RefundFailed {
		p.steps = append(p.steps, to)
	}
	return p
}

// writeRefundSteps writes the planned steps of a batch of charges in one
// transaction. If the batch cannot be written as a whole (a deadlock, a
// constraint), each charge is written on its own, so one charge's problem
// holds back no other.
func (s *PaymentService) writeRefundSteps(ctx context.Context, charges []ports.ChargeRef, byCharge map[string][]refundPlan) error {
	change := func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		var ch ports.ChargeChange
		for _, p := range byCharge[c.ID()] {
			for i, to := range p.steps {
				pref := ""
				if i == 0 && to == domain.RefundInProgress {
					pref = p.providerRef
				}
				err := s.refundStep(ctx, c, tx, &ch, p.ref.ID, to, pref)
				if errors.Is(err, domain.ErrRefundNotOpen) || errors.Is(err, domain.ErrInvalidTransition) {
					break // another worker made the step first
				}
				if err != nil {
					return ports.ChargeChange{}, err
				}
			}
		}
		if len(ch.Refunds) == 0 {
			return ch, errNoRefundStep
		}
		return ch, nil
	}
	errs, err := s.store.UpdateCharges(ctx, charges, change)
	if err != nil {
		s.log.WarnContext(ctx, "refund steps not written as a batch; writing them one by one", "charges", len(charges), "err", err)
		errs = make([]error, len(charges))
		for i, c := range charges {
			errs[i] = s.cstore.UpdateCharge(ctx, c.Scope, c.ID, change)
		}
	}
	var firstErr error
	for _, err := range errs {
		if err != nil && !errors.Is(err, errNoRefundStep) {
			firstErr = cmp.Or(firstErr, err)
		}
	}
	return firstErr
}

// errNoRefundStep leaves a charge whose refunds other workers moved first
// unwritten.
var errNoRefundStep = errors.New("no refund step left to write")

// stepRefund moves a refund to status to under its charge's lock, with
// the ledger entry and charge change the step implies.
func (s *PaymentService) stepRefund(ctx context.Context, scope ports.Scope, chargeID, refundID string, to domain.RefundStatus, providerRef string) error {
	return s.cstore.UpdateCharge(ctx, scope, chargeID, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		var ch ports.ChargeChange
		err := s.refundStep(ctx, c, tx, &ch, refundID, to, providerRef)
		return ch, err
	})
}

// refundStep adds to ch the step of refund refundID of the locked charge c
// to status to: the refund, its payment.refunded event, its ledger entry
// and the charge's own events when its status changes. A refund already
// in ch (an earlier step of the same change) is moved on from there.
func (s *PaymentService) refundStep(ctx context.Context, c *domain.Charge, tx ports.ChargeTx, ch *ports.ChargeChange,
	refundID string, to domain.RefundStatus, providerRef string,
) error {
	at := slices.IndexFunc(ch.Refunds, func(r domain.Refund) bool { return r.ID == refundID })
	var r *domain.Refund
	if at >= 0 {
		r = &ch.Refunds[at]
	} else {
		got, err := tx.GetRefund(ctx, refundID)
		if err != nil {
			return err
		}
		r = got
	}
	now := s.clock.Now()
	if err := r.Advance(to, now); err != nil {
		return err
	}
	if providerRef != "" {
		r.ProviderRef = providerRef
	}
	prev := c.Status()
	eid, err := s.ids.NewID()
	if err != nil {
		return err
	}
	var entry *domain.JournalEntry
	switch to {
	case domain.RefundRefunded:
		if err := c.CompleteRefund(r.Amount, now); err != nil {
			return err
		}
		e := domain.RefundSettledEntry(eid, *r, now)
		entry = &e
	case domain.RefundFailed:
		if err := c.ReleaseRefund(r.Amount, now); err != nil {
			return err
		}
		e := domain.RefundFailedEntry(eid, *r, now)
		entry = &e
	}
	evid, err := s.ids.NewID()
	if err != nil {
		return err
	}
	ev, err := domain.RefundEvent(c, *r, evid, now)
	if err != nil {
		return err
	}
	var evs []domain.Event
	if c.Status() != prev {
		if evs, err = domain.NewChargeEvents(c, prev, transitionWithoutRefundDuplicate(prev, c.Status()), s.cfg.Links, s.ids.NewID, now); err != nil {
			return err
		}
	}
	if entry != nil {
		ch.Entries = append(ch.Entries, *entry)
	}
	ch.Events = append(append(ch.Events, ev), evs...)
	if at < 0 {
		ch.Refunds = append(ch.Refunds, *r)
	}
	return nil
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
