package domain

import (
	"errors"
	"strings"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

// PrefixSubscription is the prefix of subscription ids.
const PrefixSubscription = "sub_"

// ParseSubscriptionID accepts "sub_<raw>" or the bare raw id.
func ParseSubscriptionID(s string) (string, bool) {
	raw := strings.TrimPrefix(s, PrefixSubscription)
	return raw, ValidRawID(raw)
}

// Limits of a subscription.
const (
	// MaxContractLen bounds contract, the API Pix's vinculo.contrato.
	MaxContractLen = 35
	// MaxSubscriptionDescriptionLen bounds description, the API Pix's
	// vinculo.objeto, which the payer's bank shows with the mandate.
	MaxSubscriptionDescriptionLen = 35
	// MaxFirstPaymentTTL bounds how long the first payment of a
	// qr_code_with_first_payment subscription can be paid (a cob's
	// longest expiry, MaxExpiresIn).
	MaxFirstPaymentTTL = MaxExpiresIn * time.Second
)

// Errors of subscriptions.
var (
	// ErrSubscriptionNotPending: the mandate is no longer awaiting the
	// payer's authorisation.
	ErrSubscriptionNotPending = errors.New("the subscription is not pending authorization")
	// ErrSubscriptionNotActive: the subscription is not active, so no
	// cycle can be scheduled or debited.
	ErrSubscriptionNotActive = errors.New("the subscription is not active")
	// ErrSubscriptionNotCancellable: the subscription already ended.
	ErrSubscriptionNotCancellable = errors.New("the subscription already ended")
	// ErrSubscriptionNotVariable: a fixed-amount subscription takes no
	// amount per cycle.
	ErrSubscriptionNotVariable = errors.New("the subscription has a fixed amount")
	// ErrNoMoreCycles: the schedule ended (end_date): there is no next
	// cycle.
	ErrNoMoreCycles = errors.New("the subscription has no more cycles")
	// ErrCycleNotInWindow: today is before the next cycle's creation
	// window (10 days before its due date).
	ErrCycleNotInWindow = errors.New("the next cycle's window has not opened")
	// ErrCycleWindowClosed: today is after the next cycle's creation
	// window (2 days before its due date): its charge can no longer be
	// created, nor its amount set.
	ErrCycleWindowClosed = errors.New("the next cycle's window has closed")
	// ErrCycleAmountNotSet: a variable subscription's next cycle has no
	// amount yet.
	ErrCycleAmountNotSet = errors.New("the next cycle has no amount yet")
	// ErrAuthorizationExpired: the mandate was not authorised before its
	// deadline.
	ErrAuthorizationExpired = errors.New("the authorization deadline has passed")
	// ErrCycleMismatch: the cycle a change was computed for is not the
	// subscription's next one any more (another process moved it on).
	ErrCycleMismatch = errors.New("the subscription moved to another cycle")
)

// Mandate is the acquirer's side of a subscription: the API Pix's rec, its
// authorisation request (solicrec, journey authorization_request) and the
// QR code the payer scans (QR journeys).
type Mandate struct {
	RecID          string
	RecStatus      RecStatus
	SolicRecID     string
	SolicRecStatus SolicRecStatus
	// BRCode is the recurrence QR code's payload (the composite code with
	// the first payment's cob for qr_code_with_first_payment), "" for
	// authorization_request.
	BRCode   string
	Location string
}

// Payer is who a mandate names, the API Pix's devedor: a name and a CPF
// or CNPJ.
type Payer struct {
	Name     string
	Document string
}

// CycleCounts counts a subscription's cycles by outcome.
type CycleCounts struct {
	Open, Paid, Failed, Skipped int
}

// CycleSummary is the cycle a subscription changed last, as its public
// object shows it.
type CycleSummary struct {
	Cycle    int
	DueDate  bizdays.Date
	Amount   int64
	ChargeID string
	Status   CycleStatus
	Attempts int
	// NextDebit is the day of the debit pending, zero when none is.
	NextDebit bizdays.Date
	// FailureCode is the payer's bank's reason for the last failed debit.
	FailureCode string
}

// SubscriptionSnapshot is the whole state of a subscription as plain
// data, for storage adapters.
type SubscriptionSnapshot struct {
	ID          string
	AccountID   string
	Mode        Mode
	Status      SubscriptionStatus
	CancelledBy CancelledBy
	Payer       Payer
	// Amount is each cycle's amount; 0 for a variable subscription.
	Amount   int64
	Variable bool
	// MaxAmount caps a variable subscription's cycle amounts; 0: no cap.
	MaxAmount   int64
	Interval    Interval
	StartDate   bizdays.Date
	EndDate     bizdays.Date
	Contract    string
	Description string
	RetryPolicy RetryPolicy
	Journey     Journey
	// FirstPayment is the amount of the immediate payment of a
	// qr_code_with_first_payment subscription, paid by the charge
	// FirstChargeID.
	FirstPayment  int64
	FirstChargeID string
	// PayerAccount is where an authorization_request's request goes, nil
	// when the merchant named none.
	PayerAccount *PayerAccount
	Mandate      Mandate
	// AuthorizationExpiresAt is when a mandate still pending expires.
	AuthorizationExpiresAt time.Time
	// NextCycle is the number of the next cycle to schedule (1 first).
	NextCycle int
	// NextAmount is the amount set for NextCycle of a variable
	// subscription, 0 until the merchant sets it.
	NextAmount int64
	Cycles     CycleCounts
	Latest     *CycleSummary
	// NextRunAt is when the worker next looks at the subscription; zero
	// when nothing is due by the clock.
	NextRunAt    time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
	AuthorizedAt time.Time
	CancelledAt  time.Time
	// EndedAt is when it was rejected, expired or completed.
	EndedAt time.Time
}

// Subscription is a payer's mandate for recurring charges (Pix
// Automático) and its schedule of cycles. Each cycle is collected by a
// charge of its own (Cycle); the subscription decides which cycle comes
// next and when.
type Subscription struct{ s SubscriptionSnapshot }

// UnmarshalSubscriptionFromStorage rebuilds a stored subscription without
// validation. Only storage adapters should call it.
func UnmarshalSubscriptionFromStorage(s SubscriptionSnapshot) *Subscription {
	return &Subscription{s: s}
}

// Snapshot returns a copy of the subscription's state.
func (s *Subscription) Snapshot() SubscriptionSnapshot {
	out := s.s
	if out.Latest != nil {
		l := *out.Latest
		out.Latest = &l
	}
	if out.PayerAccount != nil {
		a := *out.PayerAccount
		out.PayerAccount = &a
	}
	return out
}

// ID is the raw id.
func (s *Subscription) ID() string { return s.s.ID }

// AccountID is the owner.
func (s *Subscription) AccountID() string { return s.s.AccountID }

// Mode is live or test.
func (s *Subscription) Mode() Mode { return s.s.Mode }

// Status is the current status.
func (s *Subscription) Status() SubscriptionStatus { return s.s.Status }

// Payer is who the mandate names.
func (s *Subscription) Payer() Payer { return s.s.Payer }

// Customer is the payer as a charge's customer (name and document).
func (s *Subscription) Customer() Customer {
	return Customer{Name: s.s.Payer.Name, Document: s.s.Payer.Document}
}

// Journey is how the payer authorises the mandate.
func (s *Subscription) Journey() Journey { return s.s.Journey }

// PayerAccount is the payer's account an authorization_request's request
// goes to, nil when none was given.
func (s *Subscription) PayerAccount() *PayerAccount {
	if s.s.PayerAccount == nil {
		return nil
	}
	a := *s.s.PayerAccount
	return &a
}

// Interval is how often cycles fall due.
func (s *Subscription) Interval() Interval { return s.s.Interval }

// RetryPolicy is what follows a failed debit.
func (s *Subscription) RetryPolicy() RetryPolicy { return s.s.RetryPolicy }

// Contract is the merchant's reference of the mandate.
func (s *Subscription) Contract() string { return s.s.Contract }

// Description is the mandate's object as the payer's bank shows it.
func (s *Subscription) Description() string { return s.s.Description }

// StartDate is the due date of the first cycle.
func (s *Subscription) StartDate() bizdays.Date { return s.s.StartDate }

// EndDate is the last day a cycle may fall due, zero when none.
func (s *Subscription) EndDate() bizdays.Date { return s.s.EndDate }

// Amount is the fixed amount of each cycle (0 for a variable one).
func (s *Subscription) Amount() int64 { return s.s.Amount }

// Variable reports whether each cycle's amount is set per cycle.
func (s *Subscription) Variable() bool { return s.s.Variable }

// MaxAmount is a variable subscription's cap (0: none).
func (s *Subscription) MaxAmount() int64 { return s.s.MaxAmount }

// FirstPayment is the amount of the first payment (0: none).
func (s *Subscription) FirstPayment() int64 { return s.s.FirstPayment }

// FirstChargeID is the raw id of the first payment's charge.
func (s *Subscription) FirstChargeID() string { return s.s.FirstChargeID }

// Mandate is the acquirer's side of the subscription.
func (s *Subscription) Mandate() Mandate { return s.s.Mandate }

// AuthorizationExpiresAt is when a pending mandate expires.
func (s *Subscription) AuthorizationExpiresAt() time.Time { return s.s.AuthorizationExpiresAt }

// NextCycle is the number of the next cycle to schedule.
func (s *Subscription) NextCycle() int { return s.s.NextCycle }

// Cycles counts the cycles by outcome.
func (s *Subscription) Cycles() CycleCounts { return s.s.Cycles }

// NextRunAt is when the worker next looks at the subscription (zero:
// nothing is due by the clock).
func (s *Subscription) NextRunAt() time.Time { return s.s.NextRunAt }

// SetNextRunAt sets when the worker next looks at the subscription (zero:
// not by the clock).
func (s *Subscription) SetNextRunAt(t time.Time) {
	if t.IsZero() {
		s.s.NextRunAt = time.Time{}
		return
	}
	s.s.NextRunAt = t.UTC()
}

// CycleDate is the due date of cycle k.
func (s *Subscription) CycleDate(k int) bizdays.Date {
	return CycleDate(s.s.StartDate, s.s.Interval, k)
}

// HasCycle reports whether cycle k is in the schedule: it falls due on
// or before EndDate (always, without one).
func (s *Subscription) HasCycle(k int) bool {
	d := s.CycleDate(k)
	return !d.IsZero() && (s.s.EndDate.IsZero() || !d.After(s.s.EndDate))
}

// FirstChargeExpiresAt is when the first payment's charge of a
// qr_code_with_first_payment subscription stops being payable: the
// authorisation deadline.
func (s *Subscription) FirstChargeExpiresAt() time.Time { return s.s.AuthorizationExpiresAt }
