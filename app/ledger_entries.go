package app

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// maxBalanceRetries bounds how often a charge change is computed again
// after the store refused its ledger entries for a stale wallet read
// (domain.ErrInsufficientBalance from a debit or a debt repayment that a
// concurrent change of the same wallet made too large).
const maxBalanceRetries = 5

// paymentEntries are the entries crediting the merchant for c, which the
// change just settled: from payer funds when c was held for review, paying
// the wallet's debt first.
func (s *ChargeService) paymentEntries(ctx context.Context, c *domain.Charge, tx ports.ChargeTx, fromHeld bool, now time.Time) ([]domain.JournalEntry, error) {
	bal, err := tx.Balance(ctx, c.Currency())
	if err != nil {
		return nil, err
	}
	d, err := debts(ctx, c, tx, bal.Owed)
	if err != nil {
		return nil, err
	}
	return domain.PaymentEntries(s.ids.NewID, c, s.cfg.Holding, fromHeld, d, now)
}

// payerFundsEntries are the entries of payers' money a change of c
// received without giving it to the merchant: c's settling payment when
// the change put it on hold for review, and each return the change owes
// (newly recorded in owed) — but the return of a payment that was held
// already, whose money is in payer funds since it arrived.
func (s *ChargeService) payerFundsEntries(c *domain.Charge, heldBefore bool, owed []domain.PixReturn, now time.Time) ([]domain.JournalEntry, error) {
	var out []domain.JournalEntry
	add := func(amount int64) error {
		eid, err := s.ids.NewID()
		if err != nil {
			return err
		}
		out = append(out, domain.PayerFundsReceivedEntry(eid, c, amount, now))
		return nil
	}
	st := c.Settlement()
	if !heldBefore && c.HeldForReview() {
		if err := add(st.Amount); err != nil {
			return nil, err
		}
	}
	for _, r := range owed {
		if heldBefore && st != nil && st.EndToEndID == r.EndToEndID {
			continue
		}
		if err := add(r.Amount); err != nil {
			return nil, err
		}
	}
	return out, nil
}
