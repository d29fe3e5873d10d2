package app

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Automatic Pix returns (devoluções): money Quita owes back to a payer — a
// payer the lock refused, a wrong amount, a Pix for a closed charge, the
// payer of a cancelled hold. Each is recorded (a PixReturn) in the same
// transaction as the change that owes it, sent at once, and followed by
// the returns worker until the payer's bank answers: an acquirer's
// acceptance is not the money going back, and a devolução the payer's
// bank refuses (NAO_REALIZADO) is asked again under a new id, up to
// ChargesConfig.ReturnAttempts, then surfaced for an operator.

// DefaultReturnAttempts is ChargesConfig.ReturnAttempts when unset.
const DefaultReturnAttempts = 5

// returnLease is how long a return being sent or asked about belongs to
// one worker (or to the request that owed it): long enough for two calls
// to the acquirer with their retries, short enough that the returns of a
// process that died are taken over soon. It is also how soon an accepted
// return is asked about again while the payer's bank has not answered.
const returnLease = 15 * time.Second

// DefaultReturnRetryWait is ChargesConfig.ReturnRetryWait when unset: how
// long after the payer's bank refused an attempt the next one is sent (a
// refusal is seldom cured in seconds).
const DefaultReturnRetryWait = time.Minute

// returnChunk is how many returns one claim takes; returnLanes how many of
// them are driven at once. A claim takes no more than runs at once, so
// each of its returns is driven within its lease (two acquirer calls), not
// after others ahead of it, when another process could take it over.
const (
	returnLanes = 16
	returnChunk = returnLanes
)

// ReturnStats counts what the automatic returns of this process did since
// it started (the /metrics counters).
type ReturnStats struct {
	// Confirmed: returns the payer's bank credited.
	Confirmed uint64
	// Refused: attempts the payer's bank refused.
	Refused uint64
	// Surfaced: returns refused on every attempt, left for an operator.
	Surfaced uint64
	// Blocked: tries the PSP refused for Quita's credentials or the
	// account's configuration — only an operator can let those move.
	Blocked uint64
}

type returnCounters struct {
	confirmed, refused, surfaced, blocked atomic.Uint64
}

// ReturnStats reports the automatic-return counters.
func (s *ChargeService) ReturnStats() ReturnStats {
	return ReturnStats{Confirmed: s.returns.confirmed.Load(), Refused: s.returns.refused.Load(),
		Surfaced: s.returns.surfaced.Load(), Blocked: s.returns.blocked.Load()}
}

// ReturnBlockedWait is how long a return the PSP refused for Quita's
// credentials or the account's configuration waits before it is tried
// again, instead of the lease's 15 s: refused calls every few seconds
// from every process help nobody, and a PSP may lock credentials that
// keep failing. A fix is picked up within it.
const ReturnBlockedWait = 5 * time.Minute

// postponeReturn makes r due at t, unless it moved on meanwhile.
func (s *ChargeService) postponeReturn(ctx context.Context, r domain.PixReturn, t time.Time) error {
	scope := ports.Scope{AccountID: r.AccountID, Mode: r.Mode}
	err := s.store.UpdateCharge(ctx, scope, r.ChargeID, func(ctx context.Context, _ *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		cur, err := tx.GetPixReturn(ctx, r.EndToEndID)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		if cur.Status != r.Status || cur.Attempt != r.Attempt {
			return ports.ChargeChange{}, errReturnMoved
		}
		if err := cur.Postpone(t); err != nil {
			return ports.ChargeChange{}, err
		}
		return ports.ChargeChange{Returns: []domain.PixReturn{*cur}}, nil
	})
	if errors.Is(err, errReturnMoved) {
		return nil
	}
	return err
}

// returnNotAdvanced logs a return the acquirer did not take or answer now;
// the returns worker tries it again once its lease ends. A refusal of
// Quita's credentials or of the account's configuration is counted and
// logged as an alert, as for payouts: time will not fix it, an operator
// must (quitad acquirer configure); the return waits ReturnBlockedWait
// before the next try. It stays owed, never failed: the payer's bank did
// not refuse it.
func (s *ChargeService) returnNotAdvanced(ctx context.Context, msg string, r domain.PixReturn, err error) {
	if errors.Is(err, ports.ErrAcquirerUnauthorized) || errors.Is(err, ports.ErrAcquirerNotConfigured) {
		s.returns.blocked.Add(1)
		retryAt := s.clock.Now().Add(ReturnBlockedWait)
		if perr := s.postponeReturn(ctx, r, retryAt); perr != nil {
			s.log.WarnContext(ctx, "postpone a blocked return", "end_to_end_id", r.EndToEndID, "err", perr)
		}
		s.log.ErrorContext(ctx, "automatic return blocked: the PSP refused Quita's credentials or the account is not "+
			"configured for devoluções; retried every few minutes until the configuration is fixed (quitad acquirer configure)",
			"alert", "return_blocked", "charge", domain.PrefixCharge+r.ChargeID, "account", r.AccountID,
			"end_to_end_id", r.EndToEndID, "attempt", r.Attempt, "retry_at", retryAt, "err", err)
		return
	}
	s.log.WarnContext(ctx, msg, "charge", domain.PrefixCharge+r.ChargeID, "end_to_end_id", r.EndToEndID,
		"attempt", r.Attempt, "err", err)
}

// returnDue is a return a change of a charge owes besides the one of its
// settling payment (Charge.OwedReturn).
type returnDue struct {
	endToEndID string
	amount     int64
	reason     domain.PixReturnReason
}

// settlementReturn is the return c owes for its settling payment (a
// payer-lock mismatch, a cancelled hold), if any.
func settlementReturn(c *domain.Charge) []returnDue {
	if e2e, amount, reason, ok := c.OwedReturn(); ok {
		return []returnDue{{e2e, amount, reason}}
	}
	return nil
}

// oweReturns is the returns of due that the locked charge c does not
// record yet, to write in the change being computed. One Pix is returned
// once, whatever repeats the change (a replayed notification, a
// reconciliation pass).
func (s *ChargeService) oweReturns(ctx context.Context, c *domain.Charge, tx ports.ChargeTx, due []returnDue, now time.Time) ([]domain.PixReturn, error) {
	var out []domain.PixReturn
	for _, d := range due {
		_, err := tx.GetPixReturn(ctx, d.endToEndID)
		if err == nil {
			continue
		}
		if !errors.Is(err, ports.ErrNotFound) {
			return nil, err
		}
		r, err := domain.NewPixReturn(c, d.endToEndID, d.amount, d.reason, now)
		if err != nil {
			return nil, err
		}
		// Sent right after the commit; the worker takes over if that
		// fails or the process dies first.
		r.DueAt = now.Add(returnLease)
		out = append(out, r)
	}
	return out, nil
}

// errReturnKnown: the return is recorded already; nothing to write.
var errReturnKnown = errors.New("the return is already recorded")

// oweReturn records that the payer of Pix endToEndID, paid to charge id,
// is owed amount back, and sends it. It reports false when that Pix's
// return was recorded before.
func (s *ChargeService) oweReturn(ctx context.Context, scope ports.Scope, id, endToEndID string, amount int64,
	reason domain.PixReturnReason,
) (bool, error) {
	var r domain.PixReturn
	err := s.store.UpdateCharge(ctx, scope, id, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		owed, err := s.oweReturns(ctx, c, tx, []returnDue{{endToEndID, amount, reason}}, s.clock.Now())
		if err != nil {
			return ports.ChargeChange{}, err
		}
		if len(owed) == 0 {
			return ports.ChargeChange{}, errReturnKnown
		}
		r = owed[0]
		entries, err := s.payerFundsEntries(c, c.HeldForReview(), owed, s.clock.Now())
		if err != nil {
			return ports.ChargeChange{}, err
		}
		return ports.ChargeChange{Returns: owed, Entries: entries}, nil
	})
	if errors.Is(err, errReturnKnown) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.sendReturns(ctx, []domain.PixReturn{r})
	return true, nil
}

// sendReturns drives returns just recorded, after their commit; what the
// acquirer does not answer now the returns worker retries.
func (s *ChargeService) sendReturns(ctx context.Context, rs []domain.PixReturn) {
	ctx = context.WithoutCancel(ctx) // owed and committed: see it through
	for _, r := range rs {
		if err := s.driveReturn(ctx, r); err != nil {
			s.returnNotAdvanced(ctx, "automatic return deferred to the returns worker", r, err)
		}
	}
}

// AdvanceReturns drives the returns that are due until none is left to
// claim: a REQUESTED attempt is sent to the acquirer (under its derived
// id, so one a crash interrupted is not sent twice) and asked about; an
// IN_PROGRESS one is asked about; what the acquirer answers is recorded
// under the charge's lock (RETURNED; or refused: the next attempt, or
// FAILED for an operator). Claims are leased, so it is safe in every
// process at once. It returns how many returns it claimed.
func (s *ChargeService) AdvanceReturns(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		now := s.clock.Now()
		rs, err := s.store.ClaimPixReturns(ctx, now, now.Add(returnLease), returnChunk)
		if err != nil {
			return n, err
		}
		n += len(rs)
		sem := make(chan struct{}, returnLanes)
		var wg sync.WaitGroup
		for _, r := range rs {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := s.driveReturn(ctx, r); err != nil {
					s.returnNotAdvanced(ctx, "automatic return not advanced; will retry", r, err)
				}
			})
		}
		wg.Wait()
		if len(rs) < returnChunk {
			break
		}
	}
	return n, nil
}

// driveReturn asks the acquirer about r as far as it can answer now and
// records the answers: a REQUESTED attempt is sent (PUT devolução) and,
// if still in progress, asked about at once; an IN_PROGRESS one is asked
// about (GET devolução), and sent again under the same id if the acquirer
// does not know it.
func (s *ChargeService) driveReturn(ctx context.Context, r domain.PixReturn) error {
	scope := ports.Scope{AccountID: r.AccountID, Mode: r.Mode}
	var answers []ports.ReturnPixResponse
	send := func() error {
		resp, err := s.acquirer.ReturnPix(ctx, ports.ReturnPixRequest{Scope: scope, ChargeID: r.ChargeID, EndToEndID: r.EndToEndID,
			ReturnID: r.AttemptID(), Amount: r.Amount, Reason: returnDescription(r.Reason)})
		if err != nil {
			return err
		}
		answers = append(answers, *resp)
		return nil
	}
	ref := r.ProviderRef
	switch r.Status {
	case domain.PixReturnRequested:
		if err := send(); err != nil {
			return err
		}
		ref = answers[0].ProviderRef
		if answers[0].Status != domain.PixReturnInProgress {
			break
		}
		fallthrough
	case domain.PixReturnInProgress:
		resp, err := s.acquirer.ReturnPixStatus(ctx, ports.ReturnPixStatusRequest{Scope: scope, EndToEndID: r.EndToEndID,
			ReturnID: r.AttemptID(), ProviderRef: ref})
		switch {
		case errors.Is(err, ports.ErrNotFound) && len(answers) == 0:
			// Never reached the acquirer, or it forgot it: the same id again
			// is the same devolução if it did reach it.
			if err := send(); err != nil {
				return err
			}
		case err != nil && len(answers) == 0:
			return err
		case err == nil:
			answers = append(answers, *resp)
		}
	default:
		return nil
	}
	return s.recordReturn(ctx, r, answers)
}

// errReturnMoved: the return is no longer where the answers found it
// (another worker recorded them first), or they change nothing.
var errReturnMoved = errors.New("the return moved on")

// recordReturn writes what the acquirer answered about attempt r.Attempt
// of r, under the charge's lock: the return's steps and, for the charge's
// settling payment, the charge's (a mismatched charge becomes REFUNDED
// only once the money is back) with their events.
func (s *ChargeService) recordReturn(ctx context.Context, r domain.PixReturn, answers []ports.ReturnPixResponse) error {
	scope := ports.Scope{AccountID: r.AccountID, Mode: r.Mode}
	var after domain.PixReturn
	err := s.store.UpdateCharge(ctx, scope, r.ChargeID, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		cur, err := tx.GetPixReturn(ctx, r.EndToEndID)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		if cur.Status != r.Status || cur.Attempt != r.Attempt {
			return ports.ChargeChange{}, errReturnMoved
		}
		now := s.clock.Now()
		moved := false
		for _, a := range answers {
			if cur.Status == domain.PixReturnRequested {
				// Any answer about the attempt means the acquirer has it.
				if err := cur.Accept(a.ProviderRef, now, now.Add(returnLease)); err != nil {
					return ports.ChargeChange{}, err
				}
				moved = true
			}
			switch a.Status {
			case domain.PixReturnReturned:
				err = cur.Confirm(now)
			case domain.PixReturnFailed:
				err = cur.Refuse(a.Failure, s.cfg.ReturnAttempts, now, now.Add(s.cfg.ReturnRetryWait))
			default:
				continue
			}
			if err != nil {
				return ports.ChargeChange{}, err
			}
			moved = true
			break
		}
		if !moved {
			return ports.ChargeChange{}, errReturnMoved
		}
		prev := c.Status()
		if st := c.Settlement(); st != nil && st.EndToEndID == cur.EndToEndID {
			switch cur.Status {
			case domain.PixReturnReturned:
				err = c.ConfirmReturn(now)
			case domain.PixReturnFailed:
				err = c.FailReturn(now)
			}
			if err != nil {
				return ports.ChargeChange{}, err
			}
		}
		evs, err := domain.NewChargeEvents(c, prev, domain.TransitionEvents(prev, c.Status()), s.cfg.Links, s.ids.NewID, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		ch := ports.ChargeChange{Events: evs, Returns: []domain.PixReturn{*cur}}
		if cur.Status == domain.PixReturnReturned {
			// The money left payer funds for the payer's bank.
			eid, err := s.ids.NewID()
			if err != nil {
				return ports.ChargeChange{}, err
			}
			ch.Entries = []domain.JournalEntry{domain.PayerFundsReturnedEntry(eid, c, cur.Amount, now)}
		}
		after = *cur
		return ch, nil
	})
	if errors.Is(err, errReturnMoved) {
		return nil
	}
	if err != nil {
		return err
	}
	s.reportReturn(ctx, r, after)
	return nil
}
