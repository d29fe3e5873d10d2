package app

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// payoutConcurrency bounds the payouts one SendPayouts call drives at
// once (their PSP calls are network waits).
const payoutConcurrency = 16

// SendPayouts is the payout worker. It claims open payouts (a lease every
// process respects, until the next recheck) and drives each as far as the
// PSP allows:
//
//   - pending: first marked processing (committed), so a cancel can no
//     longer release money that may be on its way; then sent. A crash
//     between the two leaves a processing payout the next pass sends.
//   - processing: the PSP is asked for the Pix (reconciliation: this is
//     what catches a lost notification); one it never received is sent
//     now. The send id is the same every time, so a send after a crash,
//     a lost answer or a second worker is the same Pix: at most one is
//     ever paid.
//
// The PSP's paid or failed answer is written with its events and ledger
// entry under the payout's lock; a step another worker or a notification
// made first is skipped. Safe in every process at once.
func (s *PayoutService) SendPayouts(ctx context.Context) (int, error) {
	if s.acquirer.sender == nil {
		return 0, nil
	}
	now := s.clock.Now()
	refs, err := s.store.ClaimPayouts(ctx, now, now.Add(s.cfg.Recheck), workerBatch)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	open, firstErr, err := s.startClaimed(ctx, refs)
	if err != nil {
		return len(refs), err
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		sem = make(chan struct{}, payoutConcurrency)
	)
	for _, c := range open {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.drive(ctx, c); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return len(refs), firstErr
}

// claimedPayout is a claimed payout as the worker's first step left it:
// started when that step marked it processing (its first send follows).
type claimedPayout struct {
	ref     ports.PayoutRef
	p       *domain.Payout
	started bool
}

// errNotPending leaves a claimed payout that is not pending as it is in
// startClaimed's transaction.
var errNotPending = errors.New("payout is not pending")

// startClaimed marks every pending payout of a claim processing, with its
// events, in one transaction (committed before any is sent, so a cancel
// can no longer release money that may be on its way), and returns the
// claimed payouts that are still open: the started ones and those already
// processing. One transaction per claim, not one per payout: under load the
// worker's steps cost more than the creates they follow. failed
// is the first payout the step could not take (the others still go on);
// err, the transaction's failure (none was started).
func (s *PayoutService) startClaimed(ctx context.Context, refs []ports.PayoutRef) (open []claimedPayout, failed, err error) {
	recheck := s.clock.Now().Add(s.cfg.Recheck)
	read := make(map[string]claimedPayout, len(refs))
	errs, err := s.store.UpdatePayouts(ctx, refs, func(_ context.Context, p *domain.Payout) (ports.PayoutChange, error) {
		if p.Status() != domain.PayoutPending {
			read[p.ID()] = claimedPayout{p: p}
			return ports.PayoutChange{}, errNotPending
		}
		ch, err := s.change(p, recheck, func(p *domain.Payout, now time.Time) error { return p.MarkProcessing(now) })
		if err != nil {
			return ports.PayoutChange{}, err
		}
		read[p.ID()] = claimedPayout{p: p, started: true}
		return ch, nil
	})
	if err != nil {
		return nil, nil, err
	}
	for i, ref := range refs {
		c, ok := read[ref.ID]
		switch {
		case errs[i] != nil && !errors.Is(errs[i], errNotPending):
			// Moved by someone else meanwhile, or not found (payouts
			// never go away: a fault to hear of).
			failed = cmp.Or(failed, stepped(errs[i]))
			continue
		case !ok || (!c.started && c.p.Status() != domain.PayoutProcessing):
			continue // final meanwhile
		}
		c.ref = ref
		open = append(open, c)
	}
	return open, failed, nil
}

// stepped hides the refusal of a step someone else made first.
func stepped(err error) error {
	if errors.Is(err, domain.ErrPayoutNotOpen) || errors.Is(err, domain.ErrInvalidTransition) ||
		errors.Is(err, domain.ErrPayoutNotCancellable) {
		return nil
	}
	return err
}

// PayoutAlerts counts, since the process started, what an operator must
// look at (docs/payouts.md, "When the PSP cannot answer"); /metrics
// exports them as quita_payout_alerts_total{kind}. Each is also logged at
// error level with an "alert" attribute naming it.
type PayoutAlerts struct {
	// Blocked: passes that left a payout open because the PSP refused
	// Quita's credentials or the account is not configured for Pix out
	// (alert "payout_blocked").
	Blocked uint64
	// Unresolved: passes that left a processing payout open because the
	// PSP refused its send again; an earlier send may have gone out, so
	// the refusal cannot release its money (alert
	// "payout_send_unresolved").
	Unresolved uint64
	// PaidAfterRelease: the PSP reported paid a payout that had already
	// failed or been cancelled, its money back in the wallet (alert
	// "payout_paid_after_release").
	PaidAfterRelease uint64
}

type payoutAlerts struct {
	blocked, unresolved, paidAfterRelease atomic.Uint64
}

// Alerts returns the alerts counted so far.
func (s *PayoutService) Alerts() PayoutAlerts {
	return PayoutAlerts{Blocked: s.alerts.blocked.Load(), Unresolved: s.alerts.unresolved.Load(),
		PaidAfterRelease: s.alerts.paidAfterRelease.Load()}
}

// drive takes one payout through every step the PSP allows now.
//
// Only a definitive answer of the PSP ends a payout as failed and releases
// its hold: the Pix's status NAO_REALIZADO, or a refusal of the payout's
// very first send (made right after it became processing, so no earlier
// send exists) for its content, which the adapter confirms by finding no
// Pix under the send id (ports.PixSender). Anything else — the PSP down,
// Quita's credentials refused, the account not configured, any error of a
// status query, a refused re-send of a processing payout — leaves the
// payout processing, to be asked about again at its next recheck: the
// Pix may have been paid, and releasing its money would let the merchant
// withdraw it twice.
func (s *PayoutService) drive(ctx context.Context, c claimedPayout) error {
	ref, p := c.ref, c.p
	var (
		res ports.PixSendResult
		err error
	)
	switch {
	case c.started:
		res, err = s.send(ctx, ref.Scope, p)
		if errors.Is(err, ports.ErrAcquirerRejected) {
			// Its first send, refused for good, and nothing at the PSP
			// under its send id: nothing left, the hold goes back.
			res, err = ports.PixSendResult{Status: domain.PayoutFailed, FailureCode: "rejected_by_psp"}, nil
		}
	case p.Status() == domain.PayoutProcessing:
		res, err = s.acquirer.sender.PixSendStatus(ctx, ref.Scope, p.SendID())
		if errors.Is(err, ports.ErrNotFound) {
			// The PSP never got it (a crash or a lost request before the
			// send): send it now, under the same id.
			res, err = s.send(ctx, ref.Scope, p)
			if errors.Is(err, ports.ErrAcquirerRejected) {
				// Not its first send: an earlier one may have reached the
				// PSP (a timeout), so this refusal proves nothing.
				s.alerts.unresolved.Add(1)
				s.log.ErrorContext(ctx, "payout send refused by the PSP after an earlier attempt; left processing for an operator",
					"alert", "payout_send_unresolved", "payout", domain.PrefixPayout+p.ID(), "account", ref.AccountID, "err", err)
				return nil
			}
		}
	default:
		return nil
	}
	if err != nil {
		s.notSent(ctx, ref, p, err)
		return nil
	}
	return s.apply(ctx, ref.Scope, p.ID(), res)
}

// notSent logs a payout left open: loudly when only an operator can let it
// move (credentials or configuration), as a warning when time can.
func (s *PayoutService) notSent(ctx context.Context, ref ports.PayoutRef, p *domain.Payout, err error) {
	if errors.Is(err, ports.ErrAcquirerUnauthorized) || errors.Is(err, ports.ErrAcquirerNotConfigured) {
		s.alerts.blocked.Add(1)
		s.log.ErrorContext(ctx, "payout blocked: the PSP refused Quita's credentials or the account is not configured for Pix out; "+
			"left processing until the configuration is fixed (quitad acquirer configure)",
			"alert", "payout_blocked", "payout", domain.PrefixPayout+p.ID(), "account", ref.AccountID, "err", err)
		return
	}
	s.log.WarnContext(ctx, "payout not sent or confirmed yet; will retry", "payout", domain.PrefixPayout+p.ID(), "err", err)
}

func (s *PayoutService) send(ctx context.Context, scope ports.Scope, p *domain.Payout) (ports.PixSendResult, error) {
	return s.acquirer.sender.SendPix(ctx, ports.PixSendRequest{Scope: scope, SendID: p.SendID(), Amount: p.Amount(),
		Key: p.Key(), Description: p.Description()})
}

// apply writes the PSP's outcome: paid or failed; a Pix still in
// processing changes nothing.
func (s *PayoutService) apply(ctx context.Context, scope ports.Scope, id string, res ports.PixSendResult) error {
	var err error
	switch res.Status {
	case domain.PayoutPaid:
		var released domain.PayoutStatus
		_, err = s.move(ctx, scope, id, func(p *domain.Payout, now time.Time) error {
			if st := p.Status(); st == domain.PayoutFailed || st == domain.PayoutCancelled {
				released = st
			}
			return p.MarkPaid(res.EndToEndID, now)
		})
		if released != "" && errors.Is(err, domain.ErrPayoutNotOpen) {
			// Its money went back to the wallet, and the PSP paid it:
			// never a step someone made first, so never silent.
			s.alerts.paidAfterRelease.Add(1)
			s.log.ErrorContext(ctx, "the PSP paid a payout whose money was already released to the wallet; an operator must recover it",
				"alert", "payout_paid_after_release", "payout", domain.PrefixPayout+id, "account", scope.AccountID,
				"mode", scope.Mode, "status", released, "end_to_end_id", res.EndToEndID)
			return nil
		}
	case domain.PayoutFailed:
		_, err = s.move(ctx, scope, id, func(p *domain.Payout, now time.Time) error { return p.MarkFailed(res.FailureCode, now) })
	}
	return stepped(err)
}

// ApplySendNotification handles a PSP's notification, for live account
// accountID, that a Pix it was asked to send changed: the notification
// only says which one (its body is not trusted), and the PSP is asked for
// the Pix itself. ports.ErrNotFound when no payout of the account sends it
// (a cashout refund's Pix: the refund worker reads those).
func (s *PayoutService) ApplySendNotification(ctx context.Context, accountID, sendID string) error {
	if s.acquirer.sender == nil {
		return ErrPayoutsNotSupported
	}
	ref, err := s.store.FindPayoutBySendID(ctx, sendID)
	if err != nil {
		return err
	}
	if ref.AccountID != accountID || ref.Mode != domain.ModeLive {
		return ports.ErrNotFound
	}
	res, err := s.acquirer.sender.PixSendStatus(ctx, ref.Scope, sendID)
	if err != nil {
		return err
	}
	return s.apply(ctx, ref.Scope, ref.ID, res)
}
