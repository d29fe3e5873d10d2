package domain

import (
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"
)

// Errors of the payments surface.
var (
	// ErrRefundExceedsAmount: the refund is larger than what remains.
	ErrRefundExceedsAmount = errors.New("refund exceeds the refundable amount")
	// ErrChargeNotRefundable: only PAID and APPROVED charges are refunded.
	ErrChargeNotRefundable = errors.New("only PAID or APPROVED transactions can be refunded")
	// ErrRefundNotSupported: the provider of the method cannot refund.
	ErrRefundNotSupported = errors.New("the provider of this payment method cannot refund")
	// ErrInsufficientBalance: the merchant's wallet cannot cover a debit.
	ErrInsufficientBalance = errors.New("insufficient balance")
	// ErrRefundNotOpen: the refund already reached REFUNDED or FAILED.
	ErrRefundNotOpen = errors.New("refund is already final")
)

// ReserveRefund reserves amount of a settled charge for a new refund: the
// refunds not failed never exceed the charge amount. Call it under the
// charge's row lock.
func (c *Charge) ReserveRefund(amount int64, now time.Time) error {
	if !c.s.Status.Settled() {
		return ErrChargeNotRefundable
	}
	if c.s.Settlement == nil || !c.s.Settlement.PaidWith.Refundable() {
		return ErrRefundNotSupported
	}
	if amount <= 0 || amount > c.RefundableAmount() {
		return ErrRefundExceedsAmount
	}
	c.s.RefundedAmount += amount
	c.s.UpdatedAt = now.UTC()
	return nil
}

// RefundableAmount is what may still be refunded: the amount paid
// (PaidAmount) less the refunds not failed and what disputes took back.
func (c *Charge) RefundableAmount() int64 {
	return c.PaidAmount() - c.s.RefundedAmount - c.DisputedAmount()
}

// CompleteRefund records a refund the acquirer confirmed. The refund
// settles whatever status the charge reached meanwhile: when confirmed
// refunds reach the amount, the charge becomes REFUNDED if the transition
// table allows it from its status (PAID, APPROVED, DISPUTE), and a charge
// already charged back (terminal) keeps its status. It changes nothing when
// it fails.
func (c *Charge) CompleteRefund(amount int64, now time.Time) error {
	if amount <= 0 || c.s.RefundCompleted+amount > c.s.RefundedAmount {
		return ErrRefundExceedsAmount
	}
	c.s.RefundCompleted += amount
	c.s.UpdatedAt = now.UTC()
	if c.s.RefundCompleted == c.PaidAmount() && CanTransition(c.s.Status, TxRefunded) {
		c.s.Status = TxRefunded
	}
	return nil
}

// ReleaseRefund gives back the reservation of a failed refund.
func (c *Charge) ReleaseRefund(amount int64, now time.Time) error {
	if amount <= 0 || amount > c.s.RefundedAmount-c.s.RefundCompleted {
		return ErrRefundExceedsAmount
	}
	c.s.RefundedAmount -= amount
	c.s.UpdatedAt = now.UTC()
	return nil
}

// RefundStatus is the status of a refund.
type RefundStatus string

// Refund statuses.
const (
	RefundPending    RefundStatus = "PENDING"
	RefundInProgress RefundStatus = "IN_PROGRESS"
	RefundRefunded   RefundStatus = "REFUNDED"
	RefundFailed     RefundStatus = "FAILED"
)

// Final reports whether the refund reached REFUNDED or FAILED.
func (s RefundStatus) Final() bool { return s == RefundRefunded || s == RefundFailed }

// RefundStrategy is how a Pix refund travels.
type RefundStrategy string

// Pix refund strategies.
const (
	StrategyDevolution RefundStrategy = "devolution"
	StrategyCashout    RefundStrategy = "cashout"
)

// MaxRefundDestinationKeyLen bounds a refund's destination key, in
// characters. The longest Pix key is a 77-character e-mail (the DICT's
// limit); the rest leaves room for the spaces and punctuation a phone or a
// document is often written with.
const MaxRefundDestinationKeyLen = 100

// CheckRefundDestinationKey bounds the length of a refund's destination
// key whatever the strategy: the key is stored with the refund even where
// only a cashout would use it (a cashout also checks its form, with
// ParsePixKey), so it holds no control or bidirectional formatting
// character either. The error names FieldRefundKey and never repeats the
// key.
func CheckRefundDestinationKey(key string) error {
	if utf8.RuneCountInString(key) > MaxRefundDestinationKeyLen {
		return Invalid(FieldRefundKey, "%s must be at most %d characters", FieldRefundKey, MaxRefundDestinationKeyLen)
	}
	return CheckText(FieldRefundKey, key, false)
}

// Refund is money returned to the payer of a settled charge.
type Refund struct {
	ID              string
	ChargeID        string
	AccountID       string
	Mode            Mode
	Amount          int64
	Currency        Currency
	Status          RefundStatus
	Reason          string
	Strategy        RefundStrategy
	PassFeeToTenant bool
	// DestinationKey is the key as the merchant sent it, kept to send the
	// cashout and to retry it. It is never shown: Destination masks it.
	DestinationKey string
	// Fee is the Pix-out fee debited from the merchant (cashout with
	// passFeeToTenant), returned if the refund fails.
	Fee         int64
	EndToEndID  string
	ProviderRef string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// RefundDestination is the Pix key a cashout refund was sent to, as every
// surface shows it: its type and the key masked as a payout's destination
// is (PixKey.Masked).
type RefundDestination struct {
	Type PixKeyType
	Key  string
}

// Destination is where a cashout refund's Pix goes when the merchant named
// a key (destinationKey), masked; ok is false for a devolution (a return of
// the original Pix to the account that paid) and for a cashout without a
// key (sent to the payer's own document). A stored key that no longer
// parses, which the create's check rules out, is shown wholly hidden.
func (r Refund) Destination() (d RefundDestination, ok bool) {
	if r.Strategy != StrategyCashout || r.DestinationKey == "" {
		return RefundDestination{}, false
	}
	k, err := ParsePixKey(r.DestinationKey, "")
	if err != nil {
		return RefundDestination{Key: "****"}, true
	}
	return RefundDestination{Type: k.Type, Key: k.Masked()}, true
}

// KeyIsPayerDocument reports whether a Pix key is the payer's own
// document: a CPF or CNPJ key equal to payerTaxID, the document the
// payer's bank disclosed with the payment. With no disclosed document no
// key is the payer's.
func KeyIsPayerDocument(k PixKey, payerTaxID string) bool {
	doc := NormalizeTaxID(payerTaxID)
	return doc != "" && (k.Type == PixKeyCPF || k.Type == PixKeyCNPJ) && k.Value == doc
}

// Advance moves an open refund one step: PENDING → IN_PROGRESS →
// REFUNDED, or to FAILED from either.
func (r *Refund) Advance(to RefundStatus, now time.Time) error {
	switch {
	case r.Status.Final():
		return ErrRefundNotOpen
	case to == RefundFailed,
		r.Status == RefundPending && to == RefundInProgress,
		r.Status == RefundInProgress && to == RefundRefunded:
		r.Status = to
		r.UpdatedAt = now.UTC()
		return nil
	}
	return ErrInvalidTransition
}

// RefundEvent is the payment.refunded event announcing a refund's step.
func RefundEvent(c *Charge, r Refund, eventID string, now time.Time) (Event, error) {
	env := c.legacyEnvelope(EventPaymentRefunded, c.s.Status, now)
	env.Data.RefundID = PrefixRefund + r.ID
	env.Data.RefundStatus = string(r.Status)
	amt := r.Amount
	env.Data.RefundAmount = &amt
	env.Data.RefundStrategy = string(r.Strategy)
	if d, ok := r.Destination(); ok {
		env.Data.RefundDestinationKey, env.Data.RefundDestinationKeyType = d.Key, string(d.Type)
	}
	if r.Fee > 0 {
		fee := r.Fee
		env.Data.RefundFee = &fee
	}
	body, err := json.Marshal(env)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: PrefixEvent + eventID, Type: EventPaymentRefunded, AccountID: c.s.AccountID, Mode: c.s.Mode,
		ChargeID: c.s.ID, CreatedAt: now.UTC(), Payload: body}, nil
}
