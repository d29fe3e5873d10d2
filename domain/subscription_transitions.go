package domain

import (
	"slices"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

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
	sum := c.Summary()
	s.s.Latest = &sum
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
