package domain

import (
	"encoding/json"
	"net/mail"
	"regexp"
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
	// MaxCustomerFieldLen bounds each customer field and the payments
	// surface's customerId, in characters.
	MaxCustomerFieldLen = 200
)

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
	// charges surface, and payments in reais); a euro payment accepts any
	// tax id.
	StrictDocument bool
	CustomerRef    string
	ExpectedPayer  string
	Metadata       map[string]any
	WebhookURL     string
	// Due makes a due-date charge: NewCharge fills its Original (Amount)
	// and Created (the day of Now in Brasília) and validates it with
	// NewDueTerms. Nil makes an immediate charge.
	Due *DueTermsParams
	// Subscription makes the charge of a subscription's cycle or first
	// payment (checkChargeSubscription): Pix only, payable until
	// ExpiresAt, which only such a charge takes.
	Subscription *ChargeSubscription
	// Splits share a platform's charge among its sub-accounts, as
	// NewSplits validated them; nil for none.
	Splits    *Splits
	ExpiresAt time.Time
	Now       time.Time
}

// NewCharge validates p and returns a charge in PENDING, the internal
// "being created" status, awaiting acquirer data (AttachPix).
func NewCharge(p NewChargeParams) (*Charge, error) {
	if !ValidRawID(p.ID) || p.AccountID == "" || !p.Mode.Valid() || p.Now.IsZero() {
		return nil, Invalid(FieldID, "charge needs an id, account, mode and time")
	}
	if p.Amount <= 0 {
		return nil, Invalid(FieldAmount, "%s must be a positive integer in the smallest currency unit", FieldAmount)
	}
	if p.Amount > MaxAmount {
		return nil, Invalid(FieldAmount, "%s must not exceed %d", FieldAmount, MaxAmount)
	}
	cur, err := ParseCurrency(p.Currency)
	if err != nil {
		return nil, err
	}
	if len(p.Methods) == 0 {
		return nil, Missing(FieldPaymentMethod)
	}
	// The methods are a set: a repeat adds nothing and is dropped (the
	// first mention keeps its place), as webhook events are, so what is
	// stored and copied into every answer is at most one of each.
	methods := make([]Method, 0, min(len(p.Methods), len(Methods)))
	for _, m := range p.Methods {
		if !m.Valid() {
			return nil, Invalid(FieldPaymentMethod, "unknown payment method %q", string(m))
		}
		if !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	if err := checkMethods(methods, cur, p.Metadata); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(p.Description) > MaxDescriptionLen {
		return nil, Invalid(FieldDescription, "%s must be at most %d characters", FieldDescription, MaxDescriptionLen)
	}
	if err := CheckText(FieldDescription, p.Description, true); err != nil {
		return nil, err
	}
	expiry := p.DefaultExpiry
	if expiry <= 0 {
		expiry = DefaultExpiresIn * time.Second
	}
	if p.ExpiresIn != nil {
		if *p.ExpiresIn < MinExpiresIn {
			return nil, Invalid(FieldExpiresIn, "%s must be at least %d seconds", FieldExpiresIn, MinExpiresIn)
		}
		expiry = time.Duration(min(*p.ExpiresIn, MaxExpiresIn)) * time.Second
	}
	cust, err := validateCustomer(p.Customer, p.StrictDocument)
	if err != nil {
		return nil, err
	}
	// The merchant's customer id is copied into every legacy event and
	// every delivery of them, so it is bounded like the customer fields.
	if utf8.RuneCountInString(p.CustomerRef) > MaxCustomerFieldLen {
		return nil, Invalid(FieldCustomerRef, "%s must be at most %d characters", FieldCustomerRef, MaxCustomerFieldLen)
	}
	if err := CheckText(FieldCustomerRef, p.CustomerRef, false); err != nil {
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
	expiresAt := now.Add(expiry).Truncate(time.Second)
	var due *DueTerms
	if p.Due != nil {
		if due, err = newChargeDueTerms(*p.Due, p.Amount, methods, cust, p.ExpiresIn, now); err != nil {
			return nil, err
		}
		expiresAt = EndOfBrasiliaDay(due.LastPayableDay())
	}
	var link *ChargeSubscription
	if p.Subscription != nil {
		if expiresAt, err = checkChargeSubscription(p, methods, now); err != nil {
			return nil, err
		}
		l := *p.Subscription
		link = &l
	}
	return &Charge{s: ChargeSnapshot{
		ID:            p.ID,
		AccountID:     p.AccountID,
		Mode:          p.Mode,
		Amount:        p.Amount,
		Currency:      cur,
		Methods:       methods,
		Status:        TxPending,
		Description:   p.Description,
		Customer:      cust,
		CustomerRef:   p.CustomerRef,
		ExpectedPayer: payer,
		Metadata:      meta,
		WebhookURL:    p.WebhookURL,
		Due:           due,
		Subscription:  link,
		Splits:        p.Splits.clone(),
		ExpiresAt:     expiresAt,
		CreatedAt:     now,
		UpdatedAt:     now,
	}}, nil
}

func validateCustomer(c Customer, strictDocument bool) (Customer, error) {
	c.Name = strings.TrimSpace(c.Name)
	for _, f := range []struct {
		field Field
		v     string
	}{
		{FieldCustomerName, c.Name}, {FieldCustomerDocument, c.Document}, {FieldCustomerEmail, c.Email}, {FieldCustomerPhone, c.Phone},
	} {
		if utf8.RuneCountInString(f.v) > MaxCustomerFieldLen {
			return c, Invalid(f.field, "%s must be at most %d characters", f.field, MaxCustomerFieldLen)
		}
		if err := CheckText(f.field, f.v, false); err != nil {
			return c, err
		}
	}
	if c.Email != "" && !ValidEmail(c.Email) {
		return c, Invalid(FieldCustomerEmail, "%s is not a valid e-mail address", FieldCustomerEmail)
	}
	if c.Document != "" && strictDocument {
		if _, err := ParseTaxID(c.Document); err != nil {
			return c, Invalid(FieldCustomerDocument, "%s must be a valid CPF or CNPJ", FieldCustomerDocument)
		}
	}
	return c, nil
}

// ValidEmail reports whether s is a bare RFC 5322 address (no display name).
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}

// cleanMetadata strips reserved keys (underscore-prefixed and "quita_"
// ones), bounds the size of each key, each value and the whole, and folds
// the description in.
func cleanMetadata(in map[string]any, description string) (map[string]any, error) {
	out := make(map[string]any, len(in)+1)
	total := 0
	for k, v := range in {
		if k == "" || strings.HasPrefix(k, "_") || strings.HasPrefix(strings.ToLower(k), "quita_") {
			continue
		}
		if utf8.RuneCountInString(k) > MaxMetadataKeyLen {
			return nil, Invalid(FieldMetadata, "%s keys must be at most %d characters", FieldMetadata, MaxMetadataKeyLen)
		}
		if HasTextControl(k, false) {
			return nil, Invalid(FieldMetadata, "%s keys must not contain control or bidirectional formatting characters", FieldMetadata)
		}
		n, err := checkMetadataValue(k, v)
		if err != nil {
			return nil, err
		}
		if total += n; total > MaxMetadataBytes {
			return nil, Invalid(FieldMetadata, "%s may hold at most %d bytes of keys and values", FieldMetadata, MaxMetadataBytes)
		}
		out[k] = v
	}
	if description != "" {
		out["description"] = description
	}
	if len(out) > MaxMetadataKeys {
		return nil, Invalid(FieldMetadata, "%s may hold at most %d keys", FieldMetadata, MaxMetadataKeys)
	}
	return out, nil
}

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
			return Invalid(FieldCurrency, "%s accepts only %s", strings.ToLower(string(m)), strings.Join(names, ", "))
		}
		if m == MethodMBWay {
			phone, _ := MetadataString(meta["phone"])
			if !e164.MatchString(phone) {
				return Invalid(FieldMetadataPhone, "MBWAY requires %s in E.164 format (e.g. +351912345678)", FieldMetadataPhone)
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
