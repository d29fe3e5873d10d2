// long-file: the Subscription aggregate with its validation and every transition of its mandate and schedule, kept together so the invariants read in one place.

package domain

import (
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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

// SubscriptionStatus is the status of a subscription. The values are API
// strings: add, never rename.
type SubscriptionStatus string

// Subscription statuses.
const (
	SubscriptionPendingAuthorization SubscriptionStatus = "pending_authorization"
	SubscriptionActive               SubscriptionStatus = "active"
	SubscriptionRejected             SubscriptionStatus = "rejected"
	SubscriptionExpired              SubscriptionStatus = "expired"
	SubscriptionCancelled            SubscriptionStatus = "cancelled"
	SubscriptionCompleted            SubscriptionStatus = "completed"
)

// subscriptionTransitions is the one table of subscription status changes.
var subscriptionTransitions = map[SubscriptionStatus][]SubscriptionStatus{
	SubscriptionPendingAuthorization: {SubscriptionActive, SubscriptionRejected, SubscriptionExpired, SubscriptionCancelled},
	SubscriptionActive:               {SubscriptionCancelled, SubscriptionCompleted},
	SubscriptionRejected:             nil,
	SubscriptionExpired:              nil,
	SubscriptionCancelled:            nil,
	SubscriptionCompleted:            nil,
}

// Valid reports whether s is a subscription status.
func (s SubscriptionStatus) Valid() bool { _, ok := subscriptionTransitions[s]; return ok }

// Terminal reports whether no further change is possible.
func (s SubscriptionStatus) Terminal() bool { return s.Valid() && len(subscriptionTransitions[s]) == 0 }

// RecStatus is the status of the mandate in the API Pix's words
// (rec.status).
type RecStatus string

// Mandate (rec) statuses.
const (
	RecCreated   RecStatus = "CRIADA"
	RecApproved  RecStatus = "APROVADA"
	RecRejected  RecStatus = "REJEITADA"
	RecExpired   RecStatus = "EXPIRADA"
	RecCancelled RecStatus = "CANCELADA"
)

// RecStatus is the mandate's status for a subscription status: a
// completed subscription's mandate stays APROVADA (its calendar ended).
func (s SubscriptionStatus) RecStatus() RecStatus {
	switch s {
	case SubscriptionActive, SubscriptionCompleted:
		return RecApproved
	case SubscriptionRejected:
		return RecRejected
	case SubscriptionExpired:
		return RecExpired
	case SubscriptionCancelled:
		return RecCancelled
	}
	return RecCreated
}

// SolicRecStatus is the status of the authorisation request of an
// authorization_request subscription (the API Pix's solicrec.status).
type SolicRecStatus string

// Authorisation request statuses.
const (
	SolicRecCreated   SolicRecStatus = "CRIADA"
	SolicRecSent      SolicRecStatus = "ENVIADA"
	SolicRecReceived  SolicRecStatus = "RECEBIDA"
	SolicRecAccepted  SolicRecStatus = "ACEITA"
	SolicRecRejected  SolicRecStatus = "REJEITADA"
	SolicRecExpired   SolicRecStatus = "EXPIRADA"
	SolicRecCancelled SolicRecStatus = "CANCELADA"
)

// solicRecTransitions is the one table of a solicrec's status changes. A
// PSP may report an outcome without the steps before it, so every open
// status may move to any later one.
var solicRecTransitions = map[SolicRecStatus][]SolicRecStatus{
	SolicRecCreated:   {SolicRecSent, SolicRecReceived, SolicRecAccepted, SolicRecRejected, SolicRecExpired, SolicRecCancelled},
	SolicRecSent:      {SolicRecReceived, SolicRecAccepted, SolicRecRejected, SolicRecExpired, SolicRecCancelled},
	SolicRecReceived:  {SolicRecAccepted, SolicRecRejected, SolicRecExpired, SolicRecCancelled},
	SolicRecAccepted:  nil,
	SolicRecRejected:  nil,
	SolicRecExpired:   nil,
	SolicRecCancelled: nil,
}

// Valid reports whether s is a solicrec status.
func (s SolicRecStatus) Valid() bool { _, ok := solicRecTransitions[s]; return ok }

// Open reports whether the request still awaits the payer.
func (s SolicRecStatus) Open() bool { return s.Valid() && len(solicRecTransitions[s]) > 0 }

// CancelledBy says who cancelled a subscription. The values are API
// strings: add, never rename.
type CancelledBy string

// Who cancels.
const (
	CancelledByMerchant CancelledBy = "merchant"
	CancelledByPayer    CancelledBy = "payer"
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
	Mandate       Mandate
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

func (s *Subscription) move(to SubscriptionStatus, now time.Time) error {
	if s.s.Status == to {
		return nil
	}
	if !slices.Contains(subscriptionTransitions[s.s.Status], to) {
		return ErrInvalidTransition
	}
	s.s.Status = to
	s.s.Mandate.RecStatus = to.RecStatus()
	s.s.UpdatedAt = now.UTC()
	return nil
}

func (s *Subscription) moveSolicRec(to SolicRecStatus) {
	if s.s.Mandate.SolicRecStatus.Open() && slices.Contains(solicRecTransitions[s.s.Mandate.SolicRecStatus], to) {
		s.s.Mandate.SolicRecStatus = to
	}
}

// AttachMandate records the acquirer's rec (and solicrec, QR code) for a
// subscription being created.
func (s *Subscription) AttachMandate(m Mandate, now time.Time) error {
	if s.s.Status != SubscriptionPendingAuthorization || s.s.Mandate.RecID != "" {
		return ErrInvalidTransition
	}
	if m.RecID == "" || (s.s.Journey == JourneyAuthorizationRequest && !m.SolicRecStatus.Valid()) ||
		(s.s.Journey.QR() && m.BRCode == "") {
		return Invalid(FieldJourney, "the acquirer's mandate lacks what the %s needs", FieldJourney)
	}
	if s.s.Journey != JourneyAuthorizationRequest {
		m.SolicRecID, m.SolicRecStatus = "", ""
	} else {
		m.BRCode, m.Location = "", ""
	}
	m.RecStatus = RecCreated
	s.s.Mandate = m
	s.s.UpdatedAt = now.UTC()
	return nil
}

// SetFirstCharge links the first payment's charge (raw id).
func (s *Subscription) SetFirstCharge(id string) { s.s.FirstChargeID = id }

// SolicRecProgress records the authorisation request's progress short of
// an outcome (ENVIADA, RECEBIDA), as the acquirer reports it.
func (s *Subscription) SolicRecProgress(to SolicRecStatus, now time.Time) {
	if to == SolicRecSent || to == SolicRecReceived {
		prev := s.s.Mandate.SolicRecStatus
		s.moveSolicRec(to)
		if prev != s.s.Mandate.SolicRecStatus {
			s.s.UpdatedAt = now.UTC()
		}
	}
}

// Authorize records the payer's authorisation of the mandate: pending →
// active (rec APROVADA, its solicrec ACEITA). ErrAuthorizationExpired at
// or after the deadline.
func (s *Subscription) Authorize(now time.Time) error {
	if s.s.Status != SubscriptionPendingAuthorization {
		return ErrSubscriptionNotPending
	}
	if !now.Before(s.s.AuthorizationExpiresAt) {
		return ErrAuthorizationExpired
	}
	if err := s.move(SubscriptionActive, now); err != nil {
		return err
	}
	s.moveSolicRec(SolicRecAccepted)
	s.s.AuthorizedAt = now.UTC()
	s.s.NextRunAt = now.UTC() // the first cycle may be in its window already
	return nil
}

// Reject records the payer's refusal: pending → rejected.
func (s *Subscription) Reject(now time.Time) error {
	if s.s.Status != SubscriptionPendingAuthorization {
		return ErrSubscriptionNotPending
	}
	if err := s.move(SubscriptionRejected, now); err != nil {
		return err
	}
	s.moveSolicRec(SolicRecRejected)
	s.end(now)
	return nil
}

// ExpireAuthorization closes a mandate the payer did not authorise by its
// deadline: pending → expired. ErrSubscriptionNotPending otherwise, and
// ErrInvalidTransition before the deadline.
func (s *Subscription) ExpireAuthorization(now time.Time) error {
	if s.s.Status != SubscriptionPendingAuthorization {
		return ErrSubscriptionNotPending
	}
	if now.Before(s.s.AuthorizationExpiresAt) {
		return ErrInvalidTransition
	}
	if err := s.move(SubscriptionExpired, now); err != nil {
		return err
	}
	s.moveSolicRec(SolicRecExpired)
	s.end(now)
	return nil
}

// Cancel ends a pending or active subscription at the request of by: no
// cycle is scheduled after it. Its open cycles are cancelled by the caller
// (Cycle.Cancel, CycleClosed).
func (s *Subscription) Cancel(by CancelledBy, now time.Time) error {
	if by != CancelledByMerchant && by != CancelledByPayer {
		return ErrInvalidTransition
	}
	if s.s.Status.Terminal() {
		return ErrSubscriptionNotCancellable
	}
	if err := s.move(SubscriptionCancelled, now); err != nil {
		return err
	}
	s.moveSolicRec(SolicRecCancelled)
	s.s.CancelledBy = by
	s.s.CancelledAt = now.UTC()
	s.s.NextRunAt = time.Time{}
	return nil
}

func (s *Subscription) end(now time.Time) {
	s.s.EndedAt = now.UTC()
	s.s.NextRunAt = time.Time{}
}

// Done reports whether the schedule has no cycle left to schedule.
func (s *Subscription) Done() bool { return !s.HasCycle(s.s.NextCycle) }

// CompleteIfDone completes an active subscription whose schedule ended
// and whose every cycle closed, and reports whether it did.
func (s *Subscription) CompleteIfDone(now time.Time) bool {
	if s.s.Status != SubscriptionActive || !s.Done() || s.s.Cycles.Open > 0 {
		return false
	}
	if s.move(SubscriptionCompleted, now) != nil {
		return false
	}
	s.end(now)
	return true
}

// CycleSpec is what the next cycle's charge is created with.
type CycleSpec struct {
	Cycle   int
	DueDate bizdays.Date
	Amount  int64
	// LastDebit is the last day the cycle may be debited: its charge
	// expires at the end of it in Brasília.
	LastDebit bizdays.Date
}

// NextCycleSpec is the next cycle, when its charge may be created on
// today (Brasília): ErrSubscriptionNotActive, ErrNoMoreCycles,
// ErrCycleNotInWindow before its window, ErrCycleWindowClosed after it,
// ErrCycleAmountNotSet for a variable cycle without its amount. anyDay
// skips the window (the sandbox's advance helper).
func (s *Subscription) NextCycleSpec(today bizdays.Date, anyDay bool) (CycleSpec, error) {
	if s.s.Status != SubscriptionActive {
		return CycleSpec{}, ErrSubscriptionNotActive
	}
	k := s.s.NextCycle
	if !s.HasCycle(k) {
		return CycleSpec{}, ErrNoMoreCycles
	}
	due := s.CycleDate(k)
	if !anyDay {
		switch {
		case today.Before(WindowOpens(due)):
			return CycleSpec{}, ErrCycleNotInWindow
		case today.After(WindowCloses(due)):
			return CycleSpec{}, ErrCycleWindowClosed
		}
	}
	amount := s.s.Amount
	if s.s.Variable {
		if amount = s.s.NextAmount; amount == 0 {
			return CycleSpec{}, ErrCycleAmountNotSet
		}
	}
	return CycleSpec{Cycle: k, DueDate: due, Amount: amount, LastDebit: s.s.RetryPolicy.LastDebitDate(due)}, nil
}

// CycleScheduled records that cycle c, computed by NextCycleSpec, has its
// charge: the schedule moves to the cycle after it. ErrCycleMismatch when
// c is not the next cycle any more (another process scheduled it).
func (s *Subscription) CycleScheduled(c *Cycle, now time.Time) error {
	if s.s.Status != SubscriptionActive {
		return ErrSubscriptionNotActive
	}
	if c.Number() != s.s.NextCycle {
		return ErrCycleMismatch
	}
	s.s.NextCycle++
	s.s.NextAmount = 0
	s.s.Cycles.Open++
	s.observe(c, now)
	return nil
}

// SkipCycle gives up the next cycle, whose window closed without its
// charge (a variable cycle whose amount was never set, or a worker that
// could not run in time): no charge collects it.
func (s *Subscription) SkipCycle(today bizdays.Date, now time.Time) error {
	if s.s.Status != SubscriptionActive {
		return ErrSubscriptionNotActive
	}
	if !s.HasCycle(s.s.NextCycle) {
		return ErrNoMoreCycles
	}
	if !today.After(WindowCloses(s.CycleDate(s.s.NextCycle))) {
		return ErrInvalidTransition
	}
	s.s.NextCycle++
	s.s.NextAmount = 0
	s.s.Cycles.Skipped++
	s.s.UpdatedAt = now.UTC()
	return nil
}

// CycleChanged records a change of open cycle c (a debit failed and a
// retry is scheduled) for the subscription's public object.
func (s *Subscription) CycleChanged(c *Cycle, now time.Time) { s.observe(c, now) }

// CycleClosed records that cycle c closed (paid, failed or cancelled) and
// completes the subscription when it was the last. It reports whether the
// subscription completed.
func (s *Subscription) CycleClosed(c *Cycle, now time.Time) bool {
	if c.Status().Open() {
		return false
	}
	s.s.Cycles.Open = max(s.s.Cycles.Open-1, 0)
	switch c.Status() {
	case CobRConcluded:
		s.s.Cycles.Paid++
	case CobRExpired, CobRRejected:
		s.s.Cycles.Failed++
	case CobRCreated, CobRActive, CobRCancelled:
	}
	s.observe(c, now)
	return s.CompleteIfDone(now)
}

// observe makes c the subscription's latest cycle.
func (s *Subscription) observe(c *Cycle, now time.Time) {
	sum := &CycleSummary{Cycle: c.Number(), DueDate: c.DueDate(), Amount: c.Amount(), ChargeID: c.ChargeID(),
		Status: c.PublicStatus(), Attempts: len(c.s.Attempts)}
	if a, ok := c.PendingDebit(); ok {
		sum.NextDebit = a.Date
	}
	for _, a := range c.s.Attempts {
		if a.Status == AttemptRejected && a.RejectCode != "" {
			sum.FailureCode = a.RejectCode
		}
	}
	s.s.Latest = sum
	s.s.UpdatedAt = now.UTC()
}

// SetNextAmount sets the amount of a variable subscription's next cycle
// (NextCycle), replacing one set before, up to MaxAmount: before the
// cycle's window closes on today (ErrCycleWindowClosed after), while the
// subscription is pending or active.
func (s *Subscription) SetNextAmount(amount int64, today bizdays.Date, now time.Time) error {
	if !s.s.Variable {
		return ErrSubscriptionNotVariable
	}
	if s.s.Status != SubscriptionActive && s.s.Status != SubscriptionPendingAuthorization {
		return ErrSubscriptionNotActive
	}
	if amount <= 0 || amount > MaxAmount {
		return Invalid(FieldAmount, "%s must be a positive integer in centavos, at most %d", FieldAmount, MaxAmount)
	}
	if s.s.MaxAmount > 0 && amount > s.s.MaxAmount {
		return Invalid(FieldAmount, "%s must not exceed the subscription's %s (%d)", FieldAmount, FieldMaxAmount, s.s.MaxAmount)
	}
	if !s.HasCycle(s.s.NextCycle) {
		return ErrNoMoreCycles
	}
	if today.After(WindowCloses(s.CycleDate(s.s.NextCycle))) {
		return ErrCycleWindowClosed
	}
	s.s.NextAmount = amount
	s.s.UpdatedAt = now.UTC()
	if s.s.Status == SubscriptionActive {
		s.s.NextRunAt = now.UTC() // its window may be open: schedule it now
	}
	return nil
}

// PlanNextRun sets when the worker next looks at the subscription for
// what the clock makes due, from now: a pending mandate's deadline; for
// an active one, the next cycle's window opening (or, when its window is
// open, now), the day after it closes for a variable cycle still without
// its amount, or none when the schedule ended.
func (s *Subscription) PlanNextRun(now time.Time) {
	switch s.s.Status {
	case SubscriptionPendingAuthorization:
		s.s.NextRunAt = s.s.AuthorizationExpiresAt
		return
	case SubscriptionActive:
	case SubscriptionRejected, SubscriptionExpired, SubscriptionCancelled, SubscriptionCompleted:
		s.s.NextRunAt = time.Time{}
		return
	}
	if s.Done() {
		s.s.NextRunAt = time.Time{}
		return
	}
	due := s.CycleDate(s.s.NextCycle)
	today := BrasiliaDate(now)
	switch {
	case today.Before(WindowOpens(due)):
		s.s.NextRunAt = EndOfBrasiliaDay(WindowOpens(due).AddDays(-1))
	case s.s.Variable && s.s.NextAmount == 0 && !today.After(WindowCloses(due)):
		s.s.NextRunAt = EndOfBrasiliaDay(WindowCloses(due))
	default:
		s.s.NextRunAt = now.UTC()
	}
}
