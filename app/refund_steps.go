package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
// enough for one chunk to be claimed, asked about and written, short
// enough that the refunds of a process that died are taken over within
// seconds. A refund the acquirer is still working on is looked at again
// when its lease ends. Every refund of a chunk is asked about at once, so
// a chunk waits for two round trips whatever its size (Refund, then
// RefundStatus): 2 s at a PSP taking 1 s per call, which leaves 3 s of the
// lease for the claim and the write (tens of milliseconds). Only a PSP
// slower than about 2 s per call lets a lease end while its chunk is still
// waiting; another worker may then claim those refunds and ask again,
// which is safe (the acquirer takes the refund id as its idempotency key,
// and each step is checked under its charge's lock) but asks twice.
const refundLease = 5 * time.Second

// refundChunk is how many refunds one claim takes, and so the most
// charges whose refund steps one transaction writes: a claim and a commit
// per 64 refunds keep their cost small beside the refunds' own writes
// when the acquirer answers at once.
const refundChunk = 64

// refundLanes is how many chunks one process drives at once: while one
// chunk waits on the acquirer or on its commit, the others are claimed,
// asked about and written. With every refund of a chunk asked about at
// once, a process has at most refundLanes × refundChunk = 256 calls in
// flight, so at a PSP taking latency per call it completes at most
// 256 ÷ (2 × latency) refunds/s: 128/s at 1 s per call (quitabench
// -refunds-only measured 104/s over a 5 s burst of 300/s, the first and
// last chunks' waits included), 1,280/s at 100 ms — where the CPU comes
// first (~3.3 ms a refund for quitad and Postgres): one process kept up
// with 250/s offered, where a pass of 200 refunds that opened its lanes
// one after another and waited for its slowest chunk had done 98/s
// (docs/performance.md). The bcbpix transport keeps up to 256 idle
// connections to its PSP; a call the PSP still refuses for its rate (429)
// after the adapter's retries leaves its refund to the next lease.
const refundLanes = 4

// refundPlan is what the acquirer said of one claimed refund: the steps
// to write, in order.
type refundPlan struct {
	ref         ports.OpenRefund
	providerRef string
	steps       []domain.RefundStatus
}

// AdvanceRefunds drives open refunds until none is left to claim, in up
// to refundLanes lanes. A lane claims refundChunk of them (a lease every
// process respects, so lanes and processes share the work; each chunk's
// lease starts when it is claimed), asks the acquirer about all of them
// at once: PENDING → IN_PROGRESS once the acquirer accepted it, and
// IN_PROGRESS → REFUNDED or FAILED when it already reports the outcome;
// then writes the chunk's steps in one transaction, each with its
// payment.refunded event and ledger entry under its charge's lock, so a
// chunk costs one commit, not two per refund; and claims its next chunk
// at once. A step another worker made first is skipped.
//
// A full claim opens another lane while fewer than refundLanes run, so a
// backlog has every lane busy within a few claims, and no lane waits for
// another's chunk; a lane whose claim comes back short stops. The pass
// returns when its last lane has written its chunk: an idle process makes
// one claim per pass. An error stops every lane's claims, so the pass
// returns it soon after (to be logged) rather than when the backlog ends.
// It returns how many refunds it claimed. Safe in every process at once.
func (s *PaymentService) AdvanceRefunds(ctx context.Context) (int, error) {
	ra := s.acquirer.refunds
	if ra == nil {
		return 0, nil
	}
	var (
		mu       sync.Mutex
		handled  int
		lanes    = 1
		firstErr error
		wg       sync.WaitGroup
	)
	var lane func()
	lane = func() {
		defer func() {
			mu.Lock()
			lanes--
			mu.Unlock()
		}()
		for ctx.Err() == nil {
			refs, err := s.claimRefunds(ctx)
			mu.Lock()
			handled += len(refs)
			firstErr = cmp.Or(firstErr, err)
			full := len(refs) == refundChunk && firstErr == nil
			if full && lanes < refundLanes {
				lanes++
				wg.Go(lane)
			}
			mu.Unlock()
			if len(refs) > 0 {
				err = s.driveRefunds(ctx, ra, refs)
			}
			mu.Lock()
			firstErr = cmp.Or(firstErr, err)
			stop := firstErr != nil
			mu.Unlock()
			if !full || stop {
				return
			}
		}
	}
	wg.Go(lane)
	wg.Wait()
	return handled, firstErr
}

// claimRefunds leases up to a chunk of open refunds to this worker.
func (s *PaymentService) claimRefunds(ctx context.Context) ([]ports.OpenRefund, error) {
	now := s.clock.Now()
	return s.store.ClaimOpenRefunds(ctx, now, now.Add(refundLease), refundChunk)
}

// driveRefunds asks the acquirer about claimed refunds, all at once, and
// writes their steps.
func (s *PaymentService) driveRefunds(ctx context.Context, ra ports.RefundAcquirer, refs []ports.OpenRefund) error {
	plans := make([]refundPlan, len(refs))
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Go(func() { plans[i] = s.planRefund(ctx, ra, ref) })
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
		return nil
	}
	return s.writeRefundSteps(ctx, charges, byCharge)
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
				if errors.Is(err, errRefundMovedOn) {
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

// errRefundMovedOn: the refund is no longer where the step starts from
// (another worker made it first). Only the refund's own state says so; an
// error of the charge's fails the whole change.
var errRefundMovedOn = errors.New("the refund moved on")

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
	// The step works on a copy, stored in ch only once every part of it
	// succeeded: an error leaves ch as it was.
	at := slices.IndexFunc(ch.Refunds, func(r domain.Refund) bool { return r.ID == refundID })
	var r domain.Refund
	if at >= 0 {
		r = ch.Refunds[at]
	} else {
		got, err := tx.GetRefund(ctx, refundID)
		if err != nil {
			return err
		}
		r = *got
	}
	now := s.clock.Now()
	if err := r.Advance(to, now); err != nil {
		return fmt.Errorf("%w: %w", errRefundMovedOn, err)
	}
	if providerRef != "" {
		r.ProviderRef = providerRef
	}
	prev := c.Status()
	eid, err := s.ids.NewID()
	if err != nil {
		return err
	}
	var (
		entry    *domain.JournalEntry
		restored []domain.JournalEntry
	)
	switch to {
	case domain.RefundRefunded:
		if err := c.CompleteRefund(r.Amount, now); err != nil {
			return err
		}
		e := domain.RefundSettledEntry(eid, r, now)
		entry = &e
	case domain.RefundFailed:
		if err := c.ReleaseRefund(r.Amount, now); err != nil {
			return err
		}
		debit, err := tx.RefundDebit(ctx, r.ID)
		if err != nil {
			return err
		}
		e, err := domain.RefundFailedEntry(eid, r, debit, now)
		if err != nil {
			return err
		}
		entry = &e
		if restored, err = s.charges.restoreSplits(ctx, c, tx, r.ID, now); err != nil {
			return err
		}
	}
	evid, err := s.ids.NewID()
	if err != nil {
		return err
	}
	ev, err := domain.RefundEvent(c, r, evid, now)
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
		ch.Entries = append(append(ch.Entries, *entry), restored...)
	}
	ch.Events = append(append(ch.Events, ev), evs...)
	if at >= 0 {
		ch.Refunds[at] = r
	} else {
		ch.Refunds = append(ch.Refunds, r)
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
