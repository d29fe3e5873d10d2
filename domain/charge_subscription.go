package domain

import (
	"slices"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

// ChargeSubscription links a charge to the subscription it collects for:
// one cycle's charge (Cycle ≥ 1, due on DueDate), or the first payment of
// a qr_code_with_first_payment subscription (Cycle 0, no due date). It
// never changes after create.
type ChargeSubscription struct {
	// ID is the subscription's raw id.
	ID      string
	Cycle   int
	DueDate bizdays.Date
}

// FirstPayment reports whether the charge is a subscription's first
// payment rather than a cycle's.
func (l ChargeSubscription) FirstPayment() bool { return l.Cycle == 0 }

// checkChargeSubscription validates the link of a subscription's charge
// being created at now and returns its expiry: a subscription's charges
// are Pix only, with no due-date terms and no expires_in; they are payable
// until p.ExpiresAt (a cycle: the end of its last debit day; a first
// payment: the mandate's authorisation deadline).
func checkChargeSubscription(p NewChargeParams, methods []Method, now time.Time) (time.Time, error) {
	l := p.Subscription
	switch {
	case !ValidRawID(l.ID) || l.Cycle < 0 || (l.Cycle > 0) == l.DueDate.IsZero():
		return time.Time{}, Invalid(FieldID, "a subscription's charge needs its subscription and cycle")
	case !slices.Equal(methods, []Method{MethodPix}):
		return time.Time{}, Invalid(FieldPaymentMethod, "a subscription's charge is paid by pix only")
	case p.Due != nil || p.ExpiresIn != nil:
		return time.Time{}, Invalid(FieldExpiresIn, "a subscription's charge takes neither %s nor %s", FieldDueDate, FieldExpiresIn)
	case !p.ExpiresAt.After(now):
		return time.Time{}, Invalid(FieldExpiresIn, "a subscription's charge must expire after it is created")
	}
	return p.ExpiresAt.UTC().Truncate(time.Second), nil
}

// FailDebit closes the open charge of a subscription's cycle whose debit
// failed for good (WAITING_PAYMENT → REFUSED, public "failed"): no retry
// is left under the subscription's policy. ErrInvalidTransition for any
// other charge, ErrChargeNotPayable for one already closed.
func (c *Charge) FailDebit(now time.Time) error {
	if l := c.s.Subscription; l == nil || l.FirstPayment() {
		return ErrInvalidTransition
	}
	if !c.s.Status.Open() {
		return ErrChargeNotPayable
	}
	return c.setStatus(TxRefused, now)
}

// Subscription returns the charge's link to its subscription, and false
// for a charge that collects for none.
func (c *Charge) Subscription() (ChargeSubscription, bool) {
	if c.s.Subscription == nil {
		return ChargeSubscription{}, false
	}
	return *c.s.Subscription, true
}

// PublicChargeSubscription is a subscription charge's link as the charge
// shows it: cycle and due_date are null for the first payment.
type PublicChargeSubscription struct {
	ID           string  `json:"id"`
	Cycle        *int    `json:"cycle"`
	DueDate      *string `json:"due_date"`
	FirstPayment bool    `json:"first_payment"`
}

// publicSubscription adds the link to a subscription's charge. A cycle's
// charge is collected by debit: it has no BR Code to scan, so its pix
// block carries no QR image.
func (c *Charge) publicSubscription(out *PublicCharge) {
	l := c.s.Subscription
	if l == nil {
		return
	}
	out.Subscription = &PublicChargeSubscription{ID: PrefixSubscription + l.ID, FirstPayment: l.FirstPayment()}
	if !l.FirstPayment() {
		k, due := l.Cycle, l.DueDate.String()
		out.Subscription.Cycle, out.Subscription.DueDate = &k, &due
		if out.Pix != nil && out.Pix.BRCode == "" {
			out.Pix.QRCodeURL = ""
		}
	}
}
