package domain

import (
	"maps"
	"slices"
	"time"
)

// Customer is who the merchant says will pay. Every field is optional.
type Customer struct {
	Name     string
	Document string
	Email    string
	Phone    string
}

// PixDetails is what the acquirer bound to a charge: the BR Code and,
// when the provider has one, the txid of the cob.
type PixDetails struct {
	BRCode    string
	TxID      string
	Location  string
	ExpiresAt time.Time
}

// Settlement records the payment that settled a charge. PayerTaxID is the
// document the bank disclosed ("" when it did not); it is private and never
// leaves Quita.
type Settlement struct {
	EndToEndID string
	Amount     int64
	PaidAt     time.Time
	PaidWith   Method
	PayerTaxID string
	PayerName  string
}

// ReturnState tracks the automatic Pix return (devolução) of the payment
// that settled the charge: owed to a payer the lock refused, or to the
// payer of a held charge that was cancelled. The return itself (its
// attempts at the acquirer) is a PixReturn.
type ReturnState string

// Return states.
const (
	ReturnNone ReturnState = ""
	// ReturnRequested: owed and not yet confirmed by the payer's bank.
	ReturnRequested ReturnState = "requested"
	// ReturnDone: the payer's bank credited the return.
	ReturnDone ReturnState = "done"
	// ReturnFailed: every attempt was refused; an operator must return
	// the money.
	ReturnFailed ReturnState = "failed"
)

// ChargeSnapshot is the whole state of a charge as plain data, for storage
// adapters. Build entities with NewCharge or UnmarshalChargeFromStorage.
type ChargeSnapshot struct {
	ID             string
	AccountID      string
	Mode           Mode
	Amount         int64
	Currency       Currency
	Methods        []Method
	Status         TxStatus
	Description    string
	Customer       Customer
	CustomerRef    string
	ExpectedPayer  string
	Metadata       map[string]any
	WebhookURL     string
	Provider       string
	ProviderRef    string
	Pix            *PixDetails
	Settlement     *Settlement
	Fees           Fees
	RefundedAmount int64
	// RefundCompleted is the part of RefundedAmount the acquirer confirmed
	// (RefundedAmount also counts refunds still in flight).
	RefundCompleted int64
	// Details is the acquirer's data for the non-Pix payment methods.
	Details MethodDetails
	// MethodsPending marks a charge whose non-Pix method data the acquirer
	// has not produced yet (filled asynchronously after create).
	MethodsPending bool
	ReturnState    ReturnState
	// Disputes are the returns the payer's PSP made without Quita asking
	// (RecordDispute), oldest first.
	Disputes []Dispute
	// Due holds the terms of a due-date charge (the API Pix's cobv), nil
	// for an immediate charge. Only ReviseDueTerms changes them after
	// create, and ExpiresAt with them.
	Due *DueTerms
	// OverdueNotified records that charge.overdue was sent for a due-date
	// charge (MarkOverdue); a revision that moves the due date past now
	// clears it.
	OverdueNotified bool
	// Subscription links the charge of a subscription's cycle (or first
	// payment), nil for any other charge. It never changes after create.
	Subscription *ChargeSubscription
	// Splits share the charge among the account's sub-accounts (split.go);
	// nil for any other charge. They never change after create.
	Splits    *Splits
	ExpiresAt time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Charge is a request for money from one payer. Its stored status is a
// transaction status (TxStatus); the public status is derived from it.
type Charge struct {
	s ChargeSnapshot
}

// UnmarshalChargeFromStorage rebuilds a charge from stored data without
// validation. Only storage adapters should call it.
func UnmarshalChargeFromStorage(s ChargeSnapshot) *Charge {
	return &Charge{s: s}
}

// Snapshot returns a copy of the charge's state for storage and
// presentation. Changing it does not change the charge.
func (c *Charge) Snapshot() ChargeSnapshot {
	s := c.s
	s.Methods = slices.Clone(s.Methods)
	s.Metadata = maps.Clone(s.Metadata)
	s.Disputes = slices.Clone(s.Disputes)
	if s.Pix != nil {
		p := *s.Pix
		s.Pix = &p
	}
	if s.Settlement != nil {
		st := *s.Settlement
		s.Settlement = &st
	}
	if s.Due != nil {
		d := *s.Due
		s.Due = &d
	}
	if s.Subscription != nil {
		l := *s.Subscription
		s.Subscription = &l
	}
	s.Splits = s.Splits.clone()
	return s
}

// ID returns the raw id.
func (c *Charge) ID() string { return c.s.ID }

// AccountID returns the owning account.
func (c *Charge) AccountID() string { return c.s.AccountID }

// Mode returns live or test.
func (c *Charge) Mode() Mode { return c.s.Mode }

// Amount returns the amount in minor units.
func (c *Charge) Amount() int64 { return c.s.Amount }

// Currency returns the currency.
func (c *Charge) Currency() Currency { return c.s.Currency }

// Status returns the stored transaction status.
func (c *Charge) Status() TxStatus { return c.s.Status }

// ExpiresAt returns the authoritative expiry.
func (c *Charge) ExpiresAt() time.Time { return c.s.ExpiresAt }

// ExpectedPayer returns the normalised payer-lock document, "" when none.
func (c *Charge) ExpectedPayer() string { return c.s.ExpectedPayer }

// Pix returns the acquirer's Pix data, or nil before it is attached.
func (c *Charge) Pix() *PixDetails {
	if c.s.Pix == nil {
		return nil
	}
	p := *c.s.Pix
	return &p
}

// Methods returns the payment methods the charge offers.
func (c *Charge) Methods() []Method { return slices.Clone(c.s.Methods) }

// Settlement returns the settling payment, or nil.
func (c *Charge) Settlement() *Settlement {
	if c.s.Settlement == nil {
		return nil
	}
	s := *c.s.Settlement
	return &s
}

// ReturnState reports where the automatic return of the settling payment
// stands.
func (c *Charge) ReturnState() ReturnState { return c.s.ReturnState }

// Fees returns the fees charged on settlement (zero until paid).
func (c *Charge) Fees() Fees { return c.s.Fees }

// Details returns the non-Pix method data.
func (c *Charge) Details() MethodDetails { return c.s.Details }

// CreatedAt returns when the charge was created.
func (c *Charge) CreatedAt() time.Time { return c.s.CreatedAt }

// Provider returns the acquirer's name and its reference for the charge.
func (c *Charge) Provider() (name, ref string) { return c.s.Provider, c.s.ProviderRef }

// RefundedAmount is the amount of refunds not failed (reserved or done).
func (c *Charge) RefundedAmount() int64 { return c.s.RefundedAmount }

// RefundCompleted is the amount of refunds the acquirer confirmed.
func (c *Charge) RefundCompleted() int64 { return c.s.RefundCompleted }

// Customer returns the customer fields.
func (c *Charge) Customer() Customer { return c.s.Customer }

// Metadata returns a copy of the metadata.
func (c *Charge) Metadata() map[string]any {
	out := make(map[string]any, len(c.s.Metadata))
	for k, v := range c.s.Metadata {
		out[k] = v
	}
	return out
}

// CustomerRef is the merchant's customerId.
func (c *Charge) CustomerRef() string { return c.s.CustomerRef }

// MethodsPending reports whether the method data is still to be filled.
func (c *Charge) MethodsPending() bool { return c.s.MethodsPending }

func (c *Charge) setStatus(to TxStatus, now time.Time) error {
	if !CanTransition(c.s.Status, to) {
		return ErrInvalidTransition
	}
	c.s.Status = to
	c.s.UpdatedAt = now.UTC()
	return nil
}
