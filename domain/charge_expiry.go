package domain

import (
	"time"
)

// ExpiredAt reports whether an open charge has passed its expiry at now:
// such a charge reads as expired even before the expiry worker persists it.
func (c *Charge) ExpiredAt(now time.Time) bool {
	return c.s.Status.Open() && !now.Before(c.s.ExpiresAt)
}

// Expire closes an open charge whose time has come.
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
