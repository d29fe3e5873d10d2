package domain

import (
	"time"
)

// ExpiryDue reports whether an open charge's expiry is final at now: grace
// has passed since expires_at.
//
// Between expires_at and expires_at + grace the charge stays open: a Pix
// paid before expires_at may still be reported (the PSP's notification is
// late, or lost and found by reconciliation, or the clocks differ), and
// SettlePix accepts it then. Nothing new can be paid in the grace — a
// payment made at or after expires_at is refused whenever it is reported —
// so the grace only decides how long Quita waits for news of a payment
// already made before it declares the charge expired unpaid.
func (c *Charge) ExpiryDue(now time.Time, grace time.Duration) bool {
	return c.s.Status.Open() && !now.Before(c.s.ExpiresAt.Add(max(grace, 0)))
}

// PayableAt reports whether a payment made at at may settle the charge:
// the charge still awaits payment and at is before expires_at.
func (c *Charge) PayableAt(at time.Time) bool {
	return c.s.Status.Open() && at.Before(c.s.ExpiresAt)
}

// Expire closes an open charge. The expiry worker and reads call it once
// ExpiryDue; the expire test helper calls it at any time.
func (c *Charge) Expire(now time.Time) error {
	if !c.s.Status.Open() {
		return ErrChargeNotExpirable
	}
	return c.setStatus(TxExpired, now)
}

// Cancel closes a charge that has not settled (WAITING_PAYMENT, PENDING or
// PROCESSING). A settled charge must be refunded instead.
//
// A PROCESSING charge may hold a payer's money (a payment under a payer lock
// whose payer the bank did not disclose): cancelling it owes that payer a
// return, which is requested here and sent by the returns worker (a
// mismatched payer's return, already requested, goes on).
func (c *Charge) Cancel(now time.Time) error {
	switch c.s.Status {
	case TxPending, TxWaitingPayment, TxProcessing:
		if err := c.setStatus(TxCancelled, now); err != nil {
			return err
		}
		if c.s.Settlement != nil && c.s.ReturnState == ReturnNone {
			c.s.ReturnState = ReturnRequested
		}
		return nil
	}
	return ErrChargeNotCancellable
}
