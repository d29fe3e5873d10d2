package domain

import (
	"errors"
	"math/bits"

	"github.com/quitapix/quita/domain/bizdays"
)

// DueBreakdown is what a due-date charge asks on one day, in centavos:
// AmountDue = Original − Abatement − Discount + Fine + Interest, exactly.
// Discount is 0 whenever Fine or Interest is not, and AmountDue is at least
// one centavo.
type DueBreakdown struct {
	Date      bizdays.Date
	AmountDue int64
	Original  int64
	Fine      int64
	Interest  int64
	Discount  int64
	Abatement int64
}

var (
	// ErrOverdueClosed is returned by AmountDue for a day after the last
	// payable day: the charge can no longer be paid.
	ErrOverdueClosed = errors.New("due-date charge is past its last payable day")
	// ErrBeforeCreation is returned by AmountDue for a day before the
	// charge was created.
	ErrBeforeCreation = errors.New("due-date charge has no amount before the day it is created")
	// errNoDueTerms is a zero DueTerms, which NewDueTerms never returns.
	errNoDueTerms = errors.New("due-date terms not built by NewDueTerms")
)

// AmountDue returns what a payment on the day on (a Brasília date) must be,
// for any day from the charge's creation to LastPayableDay. It returns
// ErrBeforeCreation or ErrOverdueClosed outside that window.
//
// The rules apply in this order, each rounded down to the centavo once,
// from the exact product (a rate per day is never rounded on its own):
//
//  1. The abatement comes off the original amount on every day; the rest is
//     the base every percentage below is taken of.
//  2. On or before EffectiveDue (the due date moved off a weekend or
//     holiday) the discount applies: a *_until discount gives the tier of
//     the first date on or after on, each tier's date moved to the next
//     business day like the due date; a *_per_day_before discount gives
//     its value times the days from on to EffectiveDue (business days
//     after on up to EffectiveDue with BusinessDays). Fine and interest
//     are 0.
//  3. After EffectiveDue the fine applies once, and interest for the days
//     from EffectiveDue to on (the business days after EffectiveDue up to
//     and including on, with BusinessDays): amount × days, or
//     ⌊base × rate × days / period⌋ with period 1 day, a month (30
//     calendar or 21 business days) or a year (365 calendar or 252
//     business days). Interest is simple. The discount is 0.
//
// Rounding down favours the payer on fine and interest and the merchant on
// discount and a percent abatement, by less than a centavo each.
func (t DueTerms) AmountDue(on bizdays.Date) (DueBreakdown, error) {
	if t.params.Original == 0 {
		return DueBreakdown{}, errNoDueTerms
	}
	if !on.Valid() {
		return DueBreakdown{}, bizdays.ErrInvalidDate
	}
	if on.Before(t.params.Created) {
		return DueBreakdown{}, ErrBeforeCreation
	}
	if on.After(t.last) {
		return DueBreakdown{}, ErrOverdueClosed
	}
	b := DueBreakdown{Date: on, Original: t.params.Original, Abatement: t.abatement}
	base := b.Original - b.Abatement
	if on.After(t.effDue) {
		if t.fine != nil {
			b.Fine = t.fine.of(base, 1, 1)
		}
		if r := t.interest; r != nil {
			b.Interest = r.per.of(base, int64(lateDays(t.effDue, on, r.business)), r.period)
		}
	} else if d := t.discount; d != nil {
		b.Discount = d.on(on, t.effDue, base)
	}
	b.AmountDue = base - b.Discount + b.Fine + b.Interest
	return b, nil
}

// on is the discount of a payment on day on, on or before effDue.
func (d *discountRule) on(on, effDue bizdays.Date, base int64) int64 {
	if d.perDay != nil {
		return d.perDay.of(base, int64(earlyDays(on, effDue, d.business)), 1)
	}
	for _, tier := range d.tiers {
		if !tier.moved.Before(on) {
			return tier.value.of(base, 1, 1)
		}
	}
	return 0
}

// earlyDays is how many days a payment on on comes before effDue.
func earlyDays(on, effDue bizdays.Date, business bool) int {
	if business {
		return bizdays.BusinessDaysBetween(on, effDue)
	}
	return effDue.DaysSince(on)
}

// lateDays is how many days a payment on on comes after effDue.
func lateDays(effDue, on bizdays.Date, business bool) int {
	if business {
		return bizdays.BusinessDaysBetween(effDue, on)
	}
	return on.DaysSince(effDue)
}

// of is the rule's value for days periods of period days on base: amount ×
// days, or ⌊base × rate × days / (RateWhole × period)⌋.
//
// NewDueTerms keeps base ≤ MaxAmount (10¹³), rate ≤ MaxChargeRate (10⁵)
// and days ≤ 3,654 (ten years, plus the four days a move to a business day
// adds), so base × rate fits an int64 and so does the quotient (at most
// 10¹⁸ × 3,654 / 10⁴); only the product in between needs 128 bits.
func (v dueValue) of(base, days, period int64) int64 {
	if !v.percent {
		return v.amount * days
	}
	hi, lo := bits.Mul64(uint64(base*int64(v.rate)), uint64(days))
	q, _ := bits.Div64(hi, lo, uint64(int64(RateWhole)*period))
	return int64(q)
}
