package domain

import (
	"errors"
	"time"
)

// ErrChargeNotOverdue is returned by MarkOverdue for a charge that is not
// an open due-date charge past its due date whose overdue notice is still
// to be given.
var ErrChargeNotOverdue = errors.New("charge is not an open due-date charge past its due date")

// OverdueAt is when an open due-date charge becomes overdue: the end of
// its effective due date (the due date moved off a weekend or holiday) in
// Brasília. A payment before it is on time; one after it owes the fine and
// the interest. It is false for a charge without a due date.
func (c *Charge) OverdueAt() (time.Time, bool) {
	if c.s.Due == nil {
		return time.Time{}, false
	}
	return EndOfBrasiliaDay(c.s.Due.EffectiveDue()), true
}

// Overdue reports whether c is an open due-date charge past its due date
// at now: still payable, with the fine and the interest.
func (c *Charge) Overdue(now time.Time) bool {
	at, ok := c.OverdueAt()
	return ok && c.s.Status.Open() && !now.Before(at)
}

// OverdueNoticeAt is when charge.overdue is to be sent for c: OverdueAt,
// for an open due-date charge whose notice was not given. It is false
// otherwise — for an immediate charge, a closed one, or once MarkOverdue
// recorded the notice.
func (c *Charge) OverdueNoticeAt() (time.Time, bool) {
	at, ok := c.OverdueAt()
	if !ok || !c.s.Status.Open() || c.s.OverdueNotified {
		return time.Time{}, false
	}
	return at, true
}

// MarkOverdue records at now that c's overdue notice is given, once: it is
// ErrChargeNotOverdue unless OverdueNoticeAt is at or before now.
func (c *Charge) MarkOverdue(now time.Time) error {
	at, ok := c.OverdueNoticeAt()
	if !ok || now.Before(at) {
		return ErrChargeNotOverdue
	}
	c.s.OverdueNotified = true
	c.s.UpdatedAt = now.UTC()
	return nil
}
