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
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, payoutConcurrency)
	)
	for _, ref := range refs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.drive(ctx, ref); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return len(refs), firstErr
}

// stepped hides the refusal of a step someone else made first.
func stepped(err error) error {
	if errors.Is(err, domain.ErrPayoutNotOpen) || errors.Is(err, domain.ErrInvalidTransition) ||
		errors.Is(err, domain.ErrPayoutNotCancellable) {
		return nil
	}
	return err
}

// drive takes one payout through every step the PSP allows now.
func (s *PayoutService) drive(ctx context.Context, ref ports.PayoutRef) error {
	p, err := s.store.GetPayout(ctx, ref.Scope, ref.ID)
	if err != nil {
		return err
	}
	var res ports.PixSendResult
	switch p.Status() {
	case domain.PayoutPending:
		recheck := s.clock.Now().Add(s.cfg.Recheck)
		p, err = s.move(ctx, ref.Scope, ref.ID, recheck, func(p *domain.Payout, now time.Time) error { return p.MarkProcessing(now) })
		if err != nil {
			return stepped(err) // cancelled (or sent) meanwhile
		}
		res, err = s.send(ctx, ref.Scope, p)
	case domain.PayoutProcessing:
		res, err = s.acquirer.sender.PixSendStatus(ctx, ref.Scope, p.SendID())
		if errors.Is(err, ports.ErrNotFound) {
			// The PSP never got it (a crash or a lost request before the
			// send): send it now, under the same id.
			res, err = s.send(ctx, ref.Scope, p)
		}
	default:
		return nil
	}
	if errors.Is(err, ports.ErrAcquirerRejected) {
		// Refused for good: nothing left, the hold goes back.
		res, err = ports.PixSendResult{Status: domain.PayoutFailed, FailureCode: "rejected_by_psp"}, nil
	}
	if err != nil {
		s.log.WarnContext(ctx, "payout not sent or confirmed yet; will retry", "payout", domain.PrefixPayout+p.ID(), "err", err)
		return nil
	}
	return s.apply(ctx, ref.Scope, p.ID(), res)
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
		_, err = s.move(ctx, scope, id, time.Time{}, func(p *domain.Payout, now time.Time) error { return p.MarkPaid(res.EndToEndID, now) })
	case domain.PayoutFailed:
		_, err = s.move(ctx, scope, id, time.Time{}, func(p *domain.Payout, now time.Time) error { return p.MarkFailed(res.FailureCode, now) })
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
