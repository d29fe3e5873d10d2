package domain

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"
)

// MethodDetails is what the acquirer produced for the payment methods of a
// charge other than the Pix cob (PixDetails). Zero fields do not apply.
type MethodDetails struct {
	CardRedirectURL string
	MBEntity        string
	MBReference     string
	MBExpiresAt     time.Time
	BoletoBarcode   string
	BoletoLine      string
	BoletoPDFURL    string
	BoletoExpiresAt time.Time
	CryptoAddress   string
	CryptoNetwork   string
	CryptoCurrency  string
	// CryptoAmount is a decimal string: no float carries a crypto amount.
	CryptoAmount string
}

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

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// methodCurrencies fixes which currencies a method accepts (nil: any).
var methodCurrencies = map[Method][]Currency{
	MethodPix:        {CurrencyBRL},
	MethodBoleto:     {CurrencyBRL},
	MethodMultibanco: {"EUR"},
	MethodMBWay:      {"EUR"},
}

// checkMethods validates the methods against the currency and metadata
// (MBWAY needs metadata.phone in E.164).
func checkMethods(methods []Method, cur Currency, meta map[string]any) error {
	for _, m := range methods {
		if allowed := methodCurrencies[m]; allowed != nil && !slices.Contains(allowed, cur) {
			names := make([]string, len(allowed))
			for i, a := range allowed {
				names[i] = string(a)
			}
			return invalid("currency", "%s accepts only %s", strings.ToLower(string(m)), strings.Join(names, ", "))
		}
		if m == MethodMBWay {
			phone, _ := MetadataString(meta["phone"])
			if !e164.MatchString(phone) {
				return invalid("metadata.phone", "MBWAY requires metadata.phone in E.164 format (e.g. +351912345678)")
			}
		}
	}
	return nil
}

// MetadataString reads a metadata value that is a JSON string, whether it
// was decoded into a string or kept as raw JSON.
func MetadataString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.RawMessage:
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s, true
		}
	}
	return "", false
}

// CardMethod reports whether m settles as APPROVED (cards) rather than PAID.
func (m Method) CardMethod() bool { return m == MethodCreditCard }

// Refundable reports whether the method's provider can refund (Pix and
// card providers can; the others cannot).
func (m Method) Refundable() bool { return m == MethodPix || m == MethodCreditCard }

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

// NeedsMethodData reports whether the charge offers a method whose data
// the acquirer must produce (all but PIX, which has its cob, and MBWAY,
// which pushes to the payer's phone).
func (c *Charge) NeedsMethodData() bool {
	for _, m := range c.s.Methods {
		if m != MethodPix && m != MethodMBWay {
			return true
		}
	}
	return false
}

// MethodsPending reports whether the method data is still to be filled.
func (c *Charge) MethodsPending() bool { return c.s.MethodsPending }

// AwaitMethods opens a charge being created (PENDING → WAITING_PAYMENT)
// whose method data the acquirer will produce later (AttachMethods).
func (c *Charge) AwaitMethods(provider string, now time.Time) error {
	c.s.MethodsPending = true
	if c.s.Provider == "" {
		c.s.Provider = provider
	}
	if c.s.Status == TxPending {
		return c.setStatus(TxWaitingPayment, now)
	}
	return nil
}

// AttachMethods records the acquirer's data for the non-Pix methods and
// opens a charge still being created (PENDING → WAITING_PAYMENT).
func (c *Charge) AttachMethods(d MethodDetails, provider, providerRef string, now time.Time) error {
	c.s.Details = d
	c.s.MethodsPending = false
	if c.s.Provider == "" {
		c.s.Provider = provider
	}
	if c.s.ProviderRef == "" {
		c.s.ProviderRef = providerRef
	}
	if c.s.Status == TxPending {
		return c.setStatus(TxWaitingPayment, now)
	}
	c.s.UpdatedAt = now.UTC()
	return nil
}

// Credited reports whether the merchant was credited for this charge: it
// settled and the money was not returned by the payer lock nor held.
func (c *Charge) Credited() bool {
	return c.credited() && (c.s.Status.Settled() || c.s.Status == TxRefunded || c.s.Status == TxDispute || c.s.Status == TxChargeback)
}

// Transition drives the charge to status to, as the acquirer reports for
// methods other than Pix (and the test helper does). A move into PAID or
// APPROVED from an unsettled status settles the charge: paidWith must be one
// of its methods (default: the first that fits), APPROVED is for cards and
// PAID for the rest, and fees are applied. REFUNDED is reached only through
// refunds.
func (c *Charge) Transition(to TxStatus, paidWith Method, fees map[Method]FeeSchedule, endToEndID string, now time.Time) error {
	if !to.Valid() {
		return invalid("status", "unknown transaction status %q", string(to))
	}
	if to == TxRefunded {
		return invalid("status", "REFUNDED is reached by refunding the transaction")
	}
	if !CanTransition(c.s.Status, to) {
		return ErrInvalidTransition
	}
	settling := to.Settled() && !c.s.Status.Settled() && c.s.Status != TxDispute
	if settling {
		if paidWith == "" {
			for _, m := range c.s.Methods {
				if m.CardMethod() == (to == TxApproved) {
					paidWith = m
					break
				}
			}
		}
		if paidWith == "" || !slices.Contains(c.s.Methods, paidWith) {
			return invalid("paidWith", "paidWith must be one of the transaction's paymentMethods")
		}
		if paidWith.CardMethod() != (to == TxApproved) {
			return invalid("status", "cards settle as APPROVED, other methods as PAID")
		}
		if paidWith != MethodPix {
			endToEndID = ""
		}
	}
	if err := c.setStatus(to, now); err != nil {
		return err
	}
	if settling {
		c.s.Settlement = &Settlement{EndToEndID: endToEndID, Amount: c.s.Amount, PaidAt: now.UTC(), PaidWith: paidWith}
		c.s.Fees = fees[paidWith].Apply(c.s.Amount)
	}
	return nil
}

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
	if amount <= 0 || amount > c.s.Amount-c.s.RefundedAmount {
		return ErrRefundExceedsAmount
	}
	c.s.RefundedAmount += amount
	c.s.UpdatedAt = now.UTC()
	return nil
}

// RefundableAmount is what may still be refunded.
func (c *Charge) RefundableAmount() int64 { return c.s.Amount - c.s.RefundedAmount }

// CompleteRefund records a refund the acquirer confirmed. When confirmed
// refunds reach the amount the charge becomes REFUNDED.
func (c *Charge) CompleteRefund(amount int64, now time.Time) error {
	if amount <= 0 || c.s.RefundCompleted+amount > c.s.RefundedAmount {
		return ErrRefundExceedsAmount
	}
	c.s.RefundCompleted += amount
	c.s.UpdatedAt = now.UTC()
	if c.s.RefundCompleted == c.s.Amount && c.s.Status != TxRefunded {
		return c.setStatus(TxRefunded, now)
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
	DestinationKey  string
	// Fee is the Pix-out fee debited from the merchant (cashout with
	// passFeeToTenant), returned if the refund fails.
	Fee         int64
	EndToEndID  string
	ProviderRef string
	CreatedAt   time.Time
	UpdatedAt   time.Time
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
	body, err := json.Marshal(env)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: PrefixEvent + eventID, Type: EventPaymentRefunded, AccountID: c.s.AccountID, Mode: c.s.Mode,
		ChargeID: c.s.ID, CreatedAt: now.UTC(), Payload: body}, nil
}

// StatusEvents re-emits the events of the charge's current status, for a
// webhook resend: the legacy status event plus its canonical counterpart.
func StatusEvents(c *Charge, l Links, newID func() (string, error), now time.Time) ([]Event, error) {
	types := TransitionEvents("", c.s.Status)
	if c.s.Status.Open() {
		types = CreationEvents()
	}
	return NewChargeEvents(c, "", types, l, newID, now)
}
