package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// AutoPayoutKey is the idempotency key of a sub-account's automatic
// payout of day (a Brasília date, YYYY-MM-DD), in its live scope: one
// payout per sub-account and day, however many passes, processes or
// restarts try it. It shares the key space of the API's money writes, but
// autoPayoutFingerprint matches no request's, so a request under the same
// key is refused and never replays it.
func AutoPayoutKey(day string) string { return "auto_payout:" + day }

// autoPayoutFingerprint is every automatic payout's fingerprint: the same
// for every attempt of a day whatever amount it computed, so a second
// attempt replays the first instead of paying again.
const autoPayoutFingerprint = "quita auto payout"

// RunAutoPayouts is one pass of the automatic payouts: each live
// sub-account with auto_payout on that this Brasília day's pass has not
// handled yet pays its whole live available balance in BRL (less its
// debt) out to its payout key, less the Pix-out fee; a balance that
// cannot cover more than the fee pays nothing that day. Each sub-account
// is then marked as done for the day. It reports how many it marked; a
// sub-account whose payout failed for want of the store is left for the
// next pass, the first such error returned.
func (s *PayoutService) RunAutoPayouts(ctx context.Context) (int, error) {
	subs := s.charges.cfg.Subaccounts
	if subs == nil {
		return 0, nil
	}
	day := domain.BrasiliaDate(s.clock.Now()).String()
	due, err := subs.DueAutoPayouts(ctx, day, workerBatch)
	if err != nil {
		return 0, err
	}
	var (
		n     int
		first error
	)
	for _, a := range due {
		if err := s.autoPayout(ctx, a, day); err != nil && !decided(err) {
			s.log.WarnContext(ctx, "automatic payout", "account", a.ID, "day", day, "err", err)
			first = cmpErr(first, err)
			continue
		}
		if err := subs.MarkAutoPayout(ctx, a.ID, day); err != nil {
			first = cmpErr(first, err)
			continue
		}
		n++
	}
	return n, first
}

// autoPayout pays sub-account a's live balance of day out, once.
func (s *PayoutService) autoPayout(ctx context.Context, a domain.Account, day string) error {
	if a.PayoutPixKey.Value == "" {
		return nil // the sub-account's update refuses this; nothing to pay to
	}
	caller := Caller{Account: a, Mode: domain.ModeLive}
	ws, err := s.store.Wallets(ctx, caller.Scope())
	if err != nil {
		return err
	}
	var budget int64
	for _, w := range ws {
		if w.Currency == domain.CurrencyBRL {
			budget = w.Available - max(w.Owed, 0)
		}
	}
	sched, err := s.charges.pixOutSchedule(ctx, a.ID, s.cfg.PixOutFee)
	if err != nil {
		return err
	}
	amount := domain.MaxPayoutWithin(budget, sched)
	if amount <= 0 {
		return nil
	}
	in := CreatePayoutInput{Amount: amount, PixKey: a.PayoutPixKey.Value, KeyType: a.PayoutPixKey.Type,
		Metadata: map[string]any{"auto_payout_day": day}}
	resp, err := s.Create(ctx, caller, in, Idempotency{Key: AutoPayoutKey(day), Fingerprint: autoPayoutFingerprint},
		func(p *domain.Payout) (Response, error) {
			body, err := json.Marshal(p.Public())
			return Response{StatusCode: http.StatusCreated, Body: body}, err
		})
	if err == nil && !resp.Replayed {
		s.log.InfoContext(ctx, "automatic payout created", "account", a.ID, "day", day, "amount", amount)
	}
	return err
}

// decided reports whether an automatic payout's error is an answer that
// another pass would get again (the balance moved below the debit
// meanwhile, the key taken by another request, a value refused), so the
// day is done; any other error is the store's or the process's, and the
// next pass tries again.
func decided(err error) bool {
	var ve *domain.ValidationError
	return errors.Is(err, domain.ErrInsufficientBalance) || errors.Is(err, ErrIdempotencyKeyReused) || errors.As(err, &ve) ||
		errors.Is(err, ports.ErrNotFound)
}

// cmpErr keeps the first of a pass's errors.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
