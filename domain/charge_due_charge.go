package domain

import (
	"errors"
	"fmt"
	"slices"
	"time"
	_ "time/tzdata" // America/Sao_Paulo wherever the binary runs

	"github.com/quitapix/quita/domain/bizdays"
)

// brasilia is the zone a due-date charge's dates are in: the API Pix states
// dataDeVencimento as a civil date in Brasília, whatever zone the server
// runs in.
var brasilia = mustLoadBrasilia()

func mustLoadBrasilia() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		panic(fmt.Sprintf("domain: America/Sao_Paulo: %v (time/tzdata is linked in, so this cannot happen)", err))
	}
	return loc
}

// BrasiliaDate is the civil date in Brasília on which t falls.
func BrasiliaDate(t time.Time) bizdays.Date { return bizdays.DateOf(t.In(brasilia)) }

// EndOfBrasiliaDay is the first instant after the day d in Brasília, in
// UTC: a payment before it was made on d or earlier.
func EndOfBrasiliaDay(d bizdays.Date) time.Time {
	next := d.AddDays(1)
	return time.Date(next.Year(), next.Month(), next.Day(), 0, 0, 0, 0, brasilia).UTC()
}

// ErrNotDueDateCharge is returned by AmountDue of a charge made without a
// due date: it is paid for its amount, on no particular day.
var ErrNotDueDateCharge = errors.New("charge has no due date")

// newChargeDueTerms validates the due-date terms of a charge being created
// at now for amount: the merchant's rules through NewDueTerms, with the
// charge's amount as the original and its day of creation in Brasília.
// A due-date charge is a Pix charge with a named debtor (the API Pix's
// cobv requires devedor with a CPF or CNPJ and a name) and no expires_in:
// it expires at the end of its last payable day.
func newChargeDueTerms(p DueTermsParams, amount int64, methods []Method, c Customer, expiresIn *int64, now time.Time) (*DueTerms, error) {
	if !slices.Equal(methods, []Method{MethodPix}) {
		return nil, Invalid(FieldPaymentMethod, "a charge with a %s is paid by pix only", FieldDueDate)
	}
	if expiresIn != nil {
		return nil, Invalid(FieldExpiresIn, "%s cannot be combined with %s: a charge with a due date expires after its last payable day", FieldExpiresIn, FieldDueDate)
	}
	if c.Name == "" {
		return nil, NewValidationError(FieldCustomerName, CodeParameterMissing, "%s is required when %s is set", FieldCustomerName, FieldDueDate)
	}
	if c.Document == "" {
		return nil, NewValidationError(FieldCustomerDocument, CodeParameterMissing, "%s is required when %s is set", FieldCustomerDocument, FieldDueDate)
	}
	if _, err := ParseTaxID(c.Document); err != nil {
		return nil, Invalid(FieldCustomerDocument, "%s must be a valid CPF or CNPJ", FieldCustomerDocument)
	}
	p.Original, p.Created = amount, BrasiliaDate(now)
	t, err := NewDueTerms(p)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// DueTerms returns the charge's due-date terms, and false for a charge
// without a due date.
func (c *Charge) DueTerms() (DueTerms, bool) {
	if c.s.Due == nil {
		return DueTerms{}, false
	}
	return *c.s.Due, true
}

// PaidAmount is the amount the settling payment brought: the charge's
// amount, or for a due-date charge its settlement's amount (the amount due
// on the day it was paid). The credit, the fees, refunds and disputes
// count from it.
func (c *Charge) PaidAmount() int64 {
	if c.s.Due != nil && c.s.Settlement != nil {
		return c.s.Settlement.Amount
	}
	return c.s.Amount
}

// PaidBreakdown is what a credited due-date charge's payment was made of:
// the amount due on the day it was paid in Brasília, which SettlePix
// checked the payment brought. It is false for a charge without a due date
// or not credited.
func (c *Charge) PaidBreakdown() (DueBreakdown, bool) {
	if c.s.Due == nil || !c.credited() {
		return DueBreakdown{}, false
	}
	b, err := c.s.Due.AmountDue(BrasiliaDate(c.s.Settlement.PaidAt))
	if err != nil || b.AmountDue != c.s.Settlement.Amount {
		return DueBreakdown{}, false
	}
	return b, true
}

// AmountDue is what a payment on day on (a Brasília date) must be for a
// due-date charge: ErrNotDueDateCharge for a charge without a due date,
// otherwise DueTerms.AmountDue's answer and errors.
func (c *Charge) AmountDue(on bizdays.Date) (DueBreakdown, error) {
	if c.s.Due == nil {
		return DueBreakdown{}, ErrNotDueDateCharge
	}
	return c.s.Due.AmountDue(on)
}
