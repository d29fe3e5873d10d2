package domain

import (
	"errors"
	"reflect"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

// DueRevision changes the terms of a due-date charge (the API Pix's PATCH
// /cobv/{txid}). A nil Due or DaysAfterDue keeps the charge's; each rule is
// kept unless its RuleRevision is Set. The amount and the day of creation
// are not revisable: every rule is validated against the original amount
// and the day the charge was created, as at create.
type DueRevision struct {
	Due          *bizdays.Date
	DaysAfterDue *int
	Fine         RuleRevision[Fine]
	Interest     RuleRevision[Interest]
	Discount     RuleRevision[Discount]
	Abatement    RuleRevision[Abatement]
}

// RuleRevision changes one rule of a DueRevision. The zero value keeps the
// rule; Set with To replaces it, Set with a nil To removes it.
type RuleRevision[T any] struct {
	Set bool
	To  *T
}

// ReplaceRule is the revision that sets a rule to v.
func ReplaceRule[T any](v T) RuleRevision[T] { return RuleRevision[T]{Set: true, To: &v} }

// RemoveRule is the revision that removes a rule.
func RemoveRule[T any]() RuleRevision[T] { return RuleRevision[T]{Set: true} }

func (r RuleRevision[T]) apply(cur *T) *T {
	if !r.Set {
		return cur
	}
	return clonePtr(r.To)
}

// ErrChargeNotRevisable is returned by ReviseDueTerms for a charge that no
// longer awaits payment (paid, held for review, expired, cancelled) or
// whose last payable day has ended.
var ErrChargeNotRevisable = errors.New("charge is not awaiting payment: its terms cannot be revised")

// ReviseDueTerms validates r against the charge at now and applies it:
// the terms are rebuilt through NewDueTerms with the charge's amount as
// the original and its day of creation, and expires_at (the charge's and
// its Pix data's) moves to the end of the new last payable day in
// Brasília. changed is false when the revised terms equal the charge's;
// then nothing is touched.
//
// It returns ErrNotDueDateCharge for a charge without a due date,
// ErrChargeNotRevisable unless the charge is open (PENDING or
// WAITING_PAYMENT) and now is before its expires_at, and a
// *ValidationError naming the rule for terms NewDueTerms refuses, for a
// due date moved to before today in Brasília, and for terms whose last
// payable day would already have passed. The checks of the charge come
// before those of r.
func (c *Charge) ReviseDueTerms(r DueRevision, now time.Time) (changed bool, err error) {
	if c.s.Due == nil {
		return false, ErrNotDueDateCharge
	}
	if !c.s.Status.Open() || !now.Before(c.s.ExpiresAt) {
		return false, ErrChargeNotRevisable
	}
	cur := *c.s.Due
	p := cur.Params()
	today := BrasiliaDate(now)
	if r.Due != nil && *r.Due != p.Due {
		if r.Due.Valid() && r.Due.Before(today) {
			return false, Invalid(FieldDueDate, "a revised %s must not be before today in Brasília", FieldDueDate)
		}
		p.Due = *r.Due
	}
	if r.DaysAfterDue != nil {
		n := *r.DaysAfterDue
		p.DaysAfterDue = &n
	}
	p.Fine = r.Fine.apply(p.Fine)
	p.Interest = r.Interest.apply(p.Interest)
	p.Discount = r.Discount.apply(p.Discount)
	p.Abatement = r.Abatement.apply(p.Abatement)
	next, err := NewDueTerms(p)
	if err != nil {
		return false, err
	}
	if next.LastPayableDay().Before(today) {
		f := FieldDueDate
		if r.DaysAfterDue != nil {
			f = FieldDaysAfterDue
		}
		return false, Invalid(f, "the revised %s and %s would end the charge's last payable day before today in Brasília", FieldDueDate, FieldDaysAfterDue)
	}
	if next.Equal(cur) {
		return false, nil
	}
	c.s.Due = &next
	c.s.ExpiresAt = EndOfBrasiliaDay(next.LastPayableDay())
	if c.s.Pix != nil {
		c.s.Pix.ExpiresAt = c.s.ExpiresAt
	}
	if at, _ := c.OverdueAt(); now.Before(at) {
		// Not overdue under the new terms: a notice given under the old
		// ones does not count for the new due date.
		c.s.OverdueNotified = false
	}
	c.s.UpdatedAt = now.UTC()
	return true, nil
}

// Equal reports whether t and u are the same terms: the same original
// amount, day of creation, dates and rules as validated.
func (t DueTerms) Equal(u DueTerms) bool {
	return reflect.DeepEqual(t.Params(), u.Params())
}
