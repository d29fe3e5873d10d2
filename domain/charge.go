package domain

import (
	"maps"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the create-charge contract.
const (
	MaxDescriptionLen = 500
	MinExpiresIn      = 60
	MaxExpiresIn      = 86400
	DefaultExpiresIn  = 3600
	MaxMetadataKeys   = 50
	MaxMetadataKeyLen = 40
	maxCustomerField  = 200
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

// ReturnState tracks the automatic Pix return (devolução) that the payer lock
// owes a payer whose document did not match.
type ReturnState string

// Return states.
const (
	ReturnNone      ReturnState = ""
	ReturnRequested ReturnState = "requested"
	ReturnDone      ReturnState = "done"
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
	ExpiresAt      time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Charge is a request for money from one payer. Its stored status is a
// transaction status (TxStatus); the public status is derived from it.
type Charge struct {
	s ChargeSnapshot
}

// NewChargeParams is the validated input of NewCharge. Pointers mark
// optional values whose absence means something (ExpiresIn).
type NewChargeParams struct {
	ID            string
	AccountID     string
	Mode          Mode
	Amount        int64
	Currency      string
	Methods       []Method
	Description   string
	ExpiresIn     *int64
	DefaultExpiry time.Duration
	Customer      Customer
	// StrictDocument validates Customer.Document as a CPF or CNPJ (the
	// charges surface); the payments surface accepts any tax id.
	StrictDocument bool
	CustomerRef    string
	ExpectedPayer  string
	Metadata       map[string]any
	WebhookURL     string
	Now            time.Time
}

// NewCharge validates p and returns a charge in PENDING, the internal
// "being created" status, awaiting acquirer data (AttachPix).
func NewCharge(p NewChargeParams) (*Charge, error) {
	if !ValidRawID(p.ID) || p.AccountID == "" || !p.Mode.Valid() || p.Now.IsZero() {
		return nil, invalid("id", "charge needs an id, account, mode and time")
	}
	if p.Amount <= 0 {
		return nil, invalid("amount", "amount must be a positive integer in the smallest currency unit")
	}
	if p.Amount > MaxAmount {
		return nil, invalid("amount", "amount must not exceed %d", MaxAmount)
	}
	cur, err := ParseCurrency(p.Currency)
	if err != nil {
		return nil, err
	}
	if len(p.Methods) == 0 {
		return nil, missing("payment_method")
	}
	for _, m := range p.Methods {
		if !m.Valid() {
			return nil, invalid("payment_method", "unknown payment method %q", string(m))
		}
	}
	if err := checkMethods(p.Methods, cur, p.Metadata); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(p.Description) > MaxDescriptionLen {
		return nil, invalid("description", "description must be at most %d characters", MaxDescriptionLen)
	}
	expiry := p.DefaultExpiry
	if expiry <= 0 {
		expiry = DefaultExpiresIn * time.Second
	}
	if p.ExpiresIn != nil {
		if *p.ExpiresIn < MinExpiresIn {
			return nil, invalid("expires_in", "expires_in must be at least %d seconds", MinExpiresIn)
		}
		expiry = time.Duration(min(*p.ExpiresIn, MaxExpiresIn)) * time.Second
	}
	cust, err := validateCustomer(p.Customer, p.StrictDocument)
	if err != nil {
		return nil, err
	}
	payer, err := validatePayerLock(p.ExpectedPayer, cust)
	if err != nil {
		return nil, err
	}
	meta, err := cleanMetadata(p.Metadata, p.Description)
	if err != nil {
		return nil, err
	}
	now := p.Now.UTC()
	return &Charge{s: ChargeSnapshot{
		ID:            p.ID,
		AccountID:     p.AccountID,
		Mode:          p.Mode,
		Amount:        p.Amount,
		Currency:      cur,
		Methods:       slices.Clone(p.Methods),
		Status:        TxPending,
		Description:   p.Description,
		Customer:      cust,
		CustomerRef:   p.CustomerRef,
		ExpectedPayer: payer,
		Metadata:      meta,
		WebhookURL:    p.WebhookURL,
		ExpiresAt:     now.Add(expiry).Truncate(time.Second),
		CreatedAt:     now,
		UpdatedAt:     now,
	}}, nil
}

func validateCustomer(c Customer, strictDocument bool) (Customer, error) {
	c.Name = strings.TrimSpace(c.Name)
	for _, f := range []struct{ param, v string }{
		{"customer.name", c.Name}, {"customer.document", c.Document}, {"customer.email", c.Email}, {"customer.phone", c.Phone},
	} {
		if utf8.RuneCountInString(f.v) > maxCustomerField {
			return c, invalid(f.param, "%s must be at most %d characters", f.param, maxCustomerField)
		}
	}
	if c.Email != "" && !ValidEmail(c.Email) {
		return c, invalid("customer.email", "customer.email is not a valid e-mail address")
	}
	if c.Document != "" && strictDocument {
		if _, err := ParseTaxID(c.Document); err != nil {
			return c, invalid("customer.document", "customer.document must be a valid CPF or CNPJ")
		}
	}
	return c, nil
}

// ValidEmail reports whether s is a bare RFC 5322 address (no display name).
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}

// validatePayerLock applies the spec's payer-lock rules and returns the
// normalised expected document.
func validatePayerLock(expected string, c Customer) (string, error) {
	if expected == "" {
		return "", nil
	}
	if c.Name == "" {
		return "", &ValidationError{Param: "customer.name", Code: CodeParameterMissing,
			Message: "customer.name is required when expected_payer_tax_id is set"}
	}
	id, err := ParseTaxID(expected)
	if err != nil {
		return "", invalid("expected_payer_tax_id", "expected_payer_tax_id must be a valid 11-digit CPF or 14-character CNPJ")
	}
	if c.Document != "" && NormalizeTaxID(c.Document) != id.Value {
		return "", invalid("expected_payer_tax_id", "expected_payer_tax_id must match customer.document")
	}
	return id.Value, nil
}

// cleanMetadata strips reserved keys (underscore-prefixed and "quita_"
// ones), bounds the size and folds the description in.
func cleanMetadata(in map[string]any, description string) (map[string]any, error) {
	out := make(map[string]any, len(in)+1)
	for k, v := range in {
		if k == "" || strings.HasPrefix(k, "_") || strings.HasPrefix(strings.ToLower(k), "quita_") {
			continue
		}
		if utf8.RuneCountInString(k) > MaxMetadataKeyLen {
			return nil, invalid("metadata", "metadata keys must be at most %d characters", MaxMetadataKeyLen)
		}
		out[k] = v
	}
	if description != "" {
		out["description"] = description
	}
	if len(out) > MaxMetadataKeys {
		return nil, invalid("metadata", "metadata may hold at most %d keys", MaxMetadataKeys)
	}
	return out, nil
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
	if s.Pix != nil {
		p := *s.Pix
		s.Pix = &p
	}
	if s.Settlement != nil {
		st := *s.Settlement
		s.Settlement = &st
	}
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

// ReturnState reports the automatic return owed to a mismatched payer.
func (c *Charge) ReturnState() ReturnState { return c.s.ReturnState }

// ExpiredAt reports whether an open charge has passed its expiry at now:
// such a charge reads as expired even before the expiry worker persists it.
func (c *Charge) ExpiredAt(now time.Time) bool {
	return c.s.Status.Open() && !now.Before(c.s.ExpiresAt)
}

func (c *Charge) setStatus(to TxStatus, now time.Time) error {
	if !CanTransition(c.s.Status, to) {
		return ErrInvalidTransition
	}
	c.s.Status = to
	c.s.UpdatedAt = now.UTC()
	return nil
}

// AttachPix records the acquirer's answer to the create call and opens the
// charge for payment (PENDING → WAITING_PAYMENT).
func (c *Charge) AttachPix(p PixDetails, provider, providerRef string, now time.Time) error {
	if c.s.Pix != nil {
		return ErrPixAlreadyAttached
	}
	if c.s.Status != TxPending {
		return ErrInvalidTransition
	}
	if p.ExpiresAt.IsZero() {
		p.ExpiresAt = c.s.ExpiresAt
	}
	c.s.ExpiresAt = p.ExpiresAt
	c.s.Pix = &p
	c.s.Provider = provider
	c.s.ProviderRef = providerRef
	return c.setStatus(TxWaitingPayment, now)
}

// Refuse marks a charge the acquirer would not create (PENDING → REFUSED).
func (c *Charge) Refuse(now time.Time) error {
	if c.s.Status != TxPending {
		return ErrInvalidTransition
	}
	return c.setStatus(TxRefused, now)
}

// PixPayment is a Pix credit the acquirer reports for a charge.
type PixPayment struct {
	EndToEndID string
	Amount     int64
	// PayerTaxID is the payer's CPF or CNPJ when the bank disclosed it, ""
	// when it did not.
	PayerTaxID string
	PayerName  string
	PaidAt     time.Time
}

// SettlementOutcome is what the payer lock decided about a Pix payment.
type SettlementOutcome string

// Settlement outcomes, one per row of the spec's charge-status table.
const (
	// OutcomePaid: no lock, or the payer matched. Credit the merchant.
	OutcomePaid SettlementOutcome = "paid"
	// OutcomePayerMismatch: the lock's document differs from the payer's.
	// The money is returned to the payer; the charge reads refunded.
	OutcomePayerMismatch SettlementOutcome = "payer_mismatch"
	// OutcomeHeldForReview: under a lock the bank did not disclose the
	// payer. The charge reads processing and is never credited.
	OutcomeHeldForReview SettlementOutcome = "held_for_review"
	// OutcomeUnderpaid: the amount differs (Pix is exact-match). The bank
	// returns the money; the charge stays pending.
	OutcomeUnderpaid SettlementOutcome = "underpaid"
	// OutcomeDuplicate: this end-to-end id already settled the charge.
	OutcomeDuplicate SettlementOutcome = "duplicate"
)

// SettlePix applies a Pix payment to the charge under the payer lock and
// returns the outcome. fees is the method's schedule, applied only when the
// charge becomes paid. A payment whose end-to-end id already settled this
// charge is reported as OutcomeDuplicate and changes nothing, so acquirer
// notifications may be replayed safely.
func (c *Charge) SettlePix(p PixPayment, fees FeeSchedule) (SettlementOutcome, error) {
	if st := c.s.Settlement; st != nil && st.EndToEndID == p.EndToEndID {
		return OutcomeDuplicate, nil
	}
	if p.EndToEndID == "" || p.Amount <= 0 || p.PaidAt.IsZero() {
		return "", invalid("payment", "a pix payment needs an end-to-end id, a positive amount and a time")
	}
	if !c.s.Status.Open() || !slices.Contains(c.s.Methods, MethodPix) {
		return "", ErrChargeNotPayable
	}
	if !p.PaidAt.Before(c.s.ExpiresAt) {
		return "", ErrChargeExpired
	}
	if p.Amount != c.s.Amount {
		return OutcomeUnderpaid, nil
	}
	settlement := &Settlement{
		EndToEndID: p.EndToEndID,
		Amount:     p.Amount,
		PaidAt:     p.PaidAt.UTC(),
		PaidWith:   MethodPix,
		PayerTaxID: NormalizeTaxID(p.PayerTaxID),
		PayerName:  p.PayerName,
	}
	var (
		to      TxStatus
		outcome SettlementOutcome
	)
	switch {
	case c.s.ExpectedPayer == "" || settlement.PayerTaxID == c.s.ExpectedPayer:
		to, outcome = TxPaid, OutcomePaid
	case settlement.PayerTaxID == "":
		to, outcome = TxProcessing, OutcomeHeldForReview
	default:
		to, outcome = TxRefunded, OutcomePayerMismatch
	}
	if err := c.setStatus(to, p.PaidAt); err != nil {
		return "", err
	}
	c.s.Settlement = settlement
	switch outcome {
	case OutcomePaid:
		c.s.Fees = fees.Apply(p.Amount)
	case OutcomePayerMismatch:
		c.s.RefundedAmount = p.Amount
		c.s.ReturnState = ReturnRequested
	}
	return outcome, nil
}

// MarkReturned records that the automatic return to a mismatched payer was
// accepted by the acquirer.
func (c *Charge) MarkReturned(now time.Time) error {
	if c.s.ReturnState != ReturnRequested {
		return ErrInvalidTransition
	}
	c.s.ReturnState = ReturnDone
	c.s.UpdatedAt = now.UTC()
	return nil
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
// return, which is requested here and sent by the returns worker.
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

// Fees returns the fees charged on settlement (zero until paid).
func (c *Charge) Fees() Fees { return c.s.Fees }
