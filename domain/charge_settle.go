package domain

import (
	"slices"
	"time"
)

// validatePayerLock applies the spec's payer-lock rules and returns the
// normalised expected document.
func validatePayerLock(expected string, c Customer) (string, error) {
	if expected == "" {
		return "", nil
	}
	if c.Name == "" {
		return "", NewValidationError(FieldCustomerName, CodeParameterMissing,
			"%s is required when %s is set", FieldCustomerName, FieldExpectedPayer)
	}
	id, err := ParseTaxID(expected)
	if err != nil {
		return "", Invalid(FieldExpectedPayer, "%s must be a valid 11-digit CPF or 14-character CNPJ", FieldExpectedPayer)
	}
	if c.Document != "" && NormalizeTaxID(c.Document) != id.Value {
		return "", Invalid(FieldExpectedPayer, "%s must match %s", FieldExpectedPayer, FieldCustomerDocument)
	}
	return id.Value, nil
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
	// Returned is how much of this Pix the acquirer reports as already
	// given back (devoluções not refused); a return the charge owes for
	// it is of the rest.
	Returned int64
}

// SettlementOutcome is what the payer lock decided about a Pix payment.
type SettlementOutcome string

// Settlement outcomes, one per row of the spec's charge-status table.
const (
	// OutcomePaid: no lock, or the payer matched. Credit the merchant.
	OutcomePaid SettlementOutcome = "paid"
	// OutcomePayerMismatch: the lock's document differs from the payer's.
	// The money is returned to the payer; the charge reads processing
	// until the payer's bank confirms the return, then refunded.
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
//
// The payment's own time decides, not the time it is reported: a payment
// made before expires_at settles a charge that is still open, even when
// the news comes after expires_at (the charge stays open for a grace, see
// ExpiryDue); one made at or after expires_at is ErrChargeExpired. A
// charge already closed, expired included, is ErrChargeNotPayable.
func (c *Charge) SettlePix(p PixPayment, fees FeeSchedule) (SettlementOutcome, error) {
	if st := c.s.Settlement; st != nil && st.EndToEndID == p.EndToEndID {
		return OutcomeDuplicate, nil
	}
	if p.EndToEndID == "" || p.Amount <= 0 || p.PaidAt.IsZero() {
		return "", Invalid(FieldPayment, "a pix payment needs an end-to-end id, a positive amount and a time")
	}
	if !c.s.Status.Open() || !slices.Contains(c.s.Methods, MethodPix) {
		return "", ErrChargeNotPayable
	}
	if !p.PaidAt.Before(c.s.ExpiresAt) {
		return "", ErrChargeExpired
	}
	if p.Amount != c.amountDueAt(p.PaidAt) {
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
		// REFUNDED only once the money is back with the payer
		// (ConfirmReturn): a devolução the acquirer accepted may still be
		// refused by the payer's bank.
		to, outcome = TxProcessing, OutcomePayerMismatch
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

// amountDueAt is the one amount a Pix made at at settles the charge with:
// its amount, or for a due-date charge the amount due on at's day in
// Brasília. A day the terms refuse (before the charge's creation) has no
// such amount: 0, which no payment equals.
func (c *Charge) amountDueAt(at time.Time) int64 {
	if c.s.Due == nil {
		return c.s.Amount
	}
	b, err := c.s.Due.AmountDue(BrasiliaDate(at))
	if err != nil {
		return 0
	}
	return b.AmountDue
}

// ConfirmReturn records that the payer's bank credited the automatic
// return of the settling payment. A charge still PROCESSING (a payer-lock
// mismatch) becomes REFUNDED; a cancelled one stays cancelled.
func (c *Charge) ConfirmReturn(now time.Time) error {
	if c.s.ReturnState != ReturnRequested && c.s.ReturnState != ReturnDone {
		return ErrInvalidTransition
	}
	c.s.ReturnState = ReturnDone
	c.s.UpdatedAt = now.UTC()
	if c.s.Status == TxProcessing {
		return c.setStatus(TxRefunded, now)
	}
	return nil
}

// FailReturn records that every attempt to return the settling payment
// was refused. The status does not change: a mismatched charge stays
// PROCESSING (held, never credited) for an operator, and REFUNDED is never
// reached without the money going back.
func (c *Charge) FailReturn(now time.Time) error {
	if c.s.ReturnState == ReturnNone || c.s.Settlement == nil {
		return ErrInvalidTransition
	}
	c.s.ReturnState = ReturnFailed
	c.s.UpdatedAt = now.UTC()
	return nil
}

// OwedReturn reports the return the charge owes for its settling payment
// while it is requested: the end-to-end id, the amount and why.
func (c *Charge) OwedReturn() (endToEndID string, amount int64, reason PixReturnReason, ok bool) {
	st := c.s.Settlement
	if c.s.ReturnState != ReturnRequested || st == nil || st.EndToEndID == "" {
		return "", 0, "", false
	}
	reason = ReturnForPayerMismatch
	if c.s.Status == TxCancelled || c.s.Status == TxRefused {
		reason = ReturnForCancelledHold
	}
	return st.EndToEndID, st.Amount, reason, true
}

// Credited reports whether the merchant was credited for this charge: it
// settled and the money was not returned by the payer lock nor held.
func (c *Charge) Credited() bool {
	return c.credited() && (c.s.Status.Settled() || c.s.Status == TxRefunded || c.s.Status == TxDispute || c.s.Status == TxChargeback)
}

// HeldForReview reports whether the charge holds its payer's money
// without a decision: the payer lock could not tell who paid. The money is
// neither the merchant's nor owed back until the charge is settled for the
// merchant or closed (then it is returned).
func (c *Charge) HeldForReview() bool {
	return c.s.Settlement != nil && c.s.Status == TxProcessing && c.s.ReturnState == ReturnNone
}

// credited reports whether the settling payment was accepted for the
// merchant (not returned by the payer lock, not held for review).
func (c *Charge) credited() bool {
	return c.s.Settlement != nil && c.s.ReturnState == ReturnNone && c.s.Status != TxProcessing
}

// Transition drives the charge to status to, as the acquirer reports for
// methods other than Pix (and the test helper does). A move into PAID or
// APPROVED from an unsettled status settles the charge: paidWith must be one
// of its methods (default: the first that fits), APPROVED is for cards and
// PAID for the rest, and fees are applied. The settlement happens at now, so
// settling an open charge at or after expires_at is ErrChargeExpired.
// REFUNDED is reached only through refunds.
func (c *Charge) Transition(to TxStatus, paidWith Method, fees map[Method]FeeSchedule, endToEndID string, now time.Time) error {
	if !to.Valid() {
		return Invalid(FieldStatus, "unknown transaction status %q", string(to))
	}
	if to == TxRefunded {
		return Invalid(FieldStatus, "REFUNDED is reached by refunding the transaction")
	}
	if !CanTransition(c.s.Status, to) || c.s.ReturnState != ReturnNone {
		// A charge whose payment is owed back never settles for the
		// merchant.
		return ErrInvalidTransition
	}
	settling := to.Settled() && !c.s.Status.Settled() && c.s.Status != TxDispute
	if settling && c.s.Status.Open() && !c.PayableAt(now) {
		// Past expires_at an open charge only waits for news of a payment
		// made before it (ExpiryDue); a payment happening now is too late.
		return ErrChargeExpired
	}
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
			return Invalid(FieldPaidWith, "%s must be one of the transaction's %s", FieldPaidWith, FieldPaymentMethod)
		}
		if paidWith.CardMethod() != (to == TxApproved) {
			return Invalid(FieldStatus, "cards settle as APPROVED, other methods as PAID")
		}
		if paidWith != MethodPix {
			endToEndID = ""
		}
	}
	if err := c.setStatus(to, now); err != nil {
		return err
	}
	if (to == TxCancelled || to == TxRefused) && c.s.Settlement != nil {
		// A held payer's money goes back whatever closes the charge.
		c.s.ReturnState = ReturnRequested
	}
	if settling {
		c.s.Settlement = &Settlement{EndToEndID: endToEndID, Amount: c.s.Amount, PaidAt: now.UTC(), PaidWith: paidWith}
		c.s.Fees = fees[paidWith].Apply(c.s.Amount)
	}
	return nil
}
