package domain

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quitapix/quita/domain/bizdays"
)

// NewSubscriptionParams is the input of NewSubscription. Pointers mark
// optional values whose absence means something.
type NewSubscriptionParams struct {
	ID        string
	AccountID string
	Mode      Mode
	Customer  Customer
	// Amount fixes each cycle's amount; nil with Variable.
	Amount *int64
	// Variable makes each cycle's amount set by the merchant before the
	// cycle's window closes, up to MaxAmount when it is set.
	Variable     bool
	MaxAmount    *int64
	Interval     Interval
	StartDate    bizdays.Date
	EndDate      bizdays.Date
	Contract     string
	Description  string
	RetryPolicy  RetryPolicy
	Journey      Journey
	FirstPayment *int64
	// PayerAccount is the payer's account at their bank, where an
	// authorization_request's request goes; nil when not given.
	PayerAccount *PayerAccount
	Now          time.Time
}

// NewSubscription validates p and returns a subscription pending the
// payer's authorisation, its first cycle due on StartDate. RetryPolicy
// defaults to none, Journey to authorization_request. The mandate is
// attached once the acquirer created it (AttachMandate).
func NewSubscription(p NewSubscriptionParams) (*Subscription, error) {
	if !ValidRawID(p.ID) || p.AccountID == "" || !p.Mode.Valid() || p.Now.IsZero() {
		return nil, Invalid(FieldID, "subscription needs an id, account, mode and time")
	}
	cust, err := validatePayer(p.Customer)
	if err != nil {
		return nil, err
	}
	s := SubscriptionSnapshot{ID: p.ID, AccountID: p.AccountID, Mode: p.Mode, Status: SubscriptionPendingAuthorization,
		Payer: Payer{Name: cust.Name, Document: cust.Document}, Variable: p.Variable, Interval: p.Interval, StartDate: p.StartDate, EndDate: p.EndDate,
		Contract: p.Contract, Description: p.Description, RetryPolicy: p.RetryPolicy, Journey: p.Journey, NextCycle: 1}
	if s.Amount, s.MaxAmount, err = validateSubscriptionAmount(p); err != nil {
		return nil, err
	}
	if !s.Interval.Valid() {
		if s.Interval == "" {
			return nil, Missing(FieldInterval)
		}
		return nil, Invalid(FieldInterval, "%s must be one of weekly, monthly, quarterly, semiannual, yearly", FieldInterval)
	}
	today := BrasiliaDate(p.Now)
	switch {
	case s.StartDate.IsZero():
		return nil, Missing(FieldStartDate)
	case s.StartDate.Before(today.AddDays(WindowClosesDays)):
		return nil, Invalid(FieldStartDate, "%s must be at least %d days after today in Brasília: a cycle's charge reaches the payer's bank %d days before its due date",
			FieldStartDate, WindowClosesDays, WindowClosesDays)
	case s.StartDate.After(today.AddDays(3650)):
		return nil, Invalid(FieldStartDate, "%s must be within 10 years of today", FieldStartDate)
	case !s.EndDate.IsZero() && s.EndDate.Before(s.StartDate):
		return nil, Invalid(FieldEndDate, "%s must not be before %s", FieldEndDate, FieldStartDate)
	}
	if err := checkShortText(FieldContract, s.Contract, MaxContractLen, true); err != nil {
		return nil, err
	}
	if err := checkShortText(FieldDescription, s.Description, MaxSubscriptionDescriptionLen, false); err != nil {
		return nil, err
	}
	if s.RetryPolicy == "" {
		s.RetryPolicy = RetryNone
	}
	if !s.RetryPolicy.Valid() {
		return nil, Invalid(FieldRetryPolicy, "%s must be none or three_in_seven_days", FieldRetryPolicy)
	}
	if s.Journey == "" {
		s.Journey = JourneyAuthorizationRequest
	}
	if !s.Journey.Valid() {
		return nil, Invalid(FieldJourney, "%s must be one of authorization_request, qr_code, qr_code_with_first_payment", FieldJourney)
	}
	switch {
	case s.Journey == JourneyQRCodeWithFirstPayment && p.FirstPayment == nil:
		return nil, NewValidationError(FieldFirstPayment, CodeParameterMissing, "%s is required when %s is qr_code_with_first_payment", FieldFirstPayment, FieldJourney)
	case s.Journey != JourneyQRCodeWithFirstPayment && p.FirstPayment != nil:
		return nil, Invalid(FieldFirstPayment, "%s applies only when %s is qr_code_with_first_payment", FieldFirstPayment, FieldJourney)
	case p.FirstPayment != nil && (*p.FirstPayment <= 0 || *p.FirstPayment > MaxAmount):
		return nil, Invalid(FieldFirstPayment, "%s must be a positive integer in centavos, at most %d", FieldFirstPayment, MaxAmount)
	case p.FirstPayment != nil:
		s.FirstPayment = *p.FirstPayment
	}
	if p.PayerAccount != nil {
		if s.Journey != JourneyAuthorizationRequest {
			return nil, Invalid(FieldPayerAccount, "%s applies only when %s is authorization_request", FieldPayerAccount, FieldJourney)
		}
		pa, err := p.PayerAccount.validate()
		if err != nil {
			return nil, err
		}
		s.PayerAccount = &pa
	}
	now := p.Now.UTC()
	s.CreatedAt, s.UpdatedAt = now, now
	s.AuthorizationExpiresAt = EndOfBrasiliaDay(WindowCloses(s.StartDate))
	if s.Journey == JourneyQRCodeWithFirstPayment {
		// The payer authorises by paying the first payment's cob, whose
		// expiry bounds the authorisation too.
		s.AuthorizationExpiresAt = minTime(s.AuthorizationExpiresAt, now.Add(MaxFirstPaymentTTL).Truncate(time.Second))
	}
	s.NextRunAt = s.AuthorizationExpiresAt
	return &Subscription{s: s}, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// validatePayer checks the payer the mandate names: the API Pix's devedor
// needs a name and a valid CPF or CNPJ.
func validatePayer(c Customer) (Customer, error) {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		return c, Missing(FieldCustomerName)
	}
	if utf8.RuneCountInString(c.Name) > MaxNameLen {
		return c, Invalid(FieldCustomerName, "%s must be at most %d characters", FieldCustomerName, MaxNameLen)
	}
	if err := CheckText(FieldCustomerName, c.Name, false); err != nil {
		return c, err
	}
	if c.Document == "" {
		return c, Missing(FieldCustomerDocument)
	}
	if _, err := ParseTaxID(c.Document); err != nil || utf8.RuneCountInString(c.Document) > MaxCustomerFieldLen {
		return c, Invalid(FieldCustomerDocument, "%s must be a valid CPF or CNPJ", FieldCustomerDocument)
	}
	return Customer{Name: c.Name, Document: c.Document}, nil
}

// validateSubscriptionAmount checks that exactly one of a fixed amount and
// a variable amount is set, and their bounds.
func validateSubscriptionAmount(p NewSubscriptionParams) (amount, maxAmount int64, err error) {
	switch {
	case p.Amount != nil && p.Variable:
		return 0, 0, Invalid(FieldVariable, "send either %s (a fixed amount) or %s, not both", FieldAmount, FieldVariable)
	case p.Amount == nil && !p.Variable:
		return 0, 0, NewValidationError(FieldAmount, CodeParameterMissing, "%s is required unless %s is set", FieldAmount, FieldVariable)
	case p.Amount != nil && (*p.Amount <= 0 || *p.Amount > MaxAmount):
		return 0, 0, Invalid(FieldAmount, "%s must be a positive integer in centavos, at most %d", FieldAmount, MaxAmount)
	case p.Amount != nil:
		return *p.Amount, 0, nil
	case p.MaxAmount != nil && (*p.MaxAmount <= 0 || *p.MaxAmount > MaxAmount):
		return 0, 0, Invalid(FieldMaxAmount, "%s must be a positive integer in centavos, at most %d", FieldMaxAmount, MaxAmount)
	case p.MaxAmount != nil:
		return 0, *p.MaxAmount, nil
	}
	return 0, 0, nil
}

// checkShortText bounds a one-line text field.
func checkShortText(f Field, v string, maxLen int, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return Missing(f)
	}
	if utf8.RuneCountInString(v) > maxLen {
		return Invalid(f, "%s must be at most %d characters", f, maxLen)
	}
	return CheckText(f, v, false)
}
