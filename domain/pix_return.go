package domain

import (
	"strconv"
	"time"
)

// PixReturnStatus is where an automatic Pix return (devolução) stands.
// Values are stored: add, never rename.
type PixReturnStatus string

// Pix return statuses. One return may take several attempts, each a
// devolução of its own id at the acquirer: REQUESTED (the current attempt
// is owed and not yet accepted) → IN_PROGRESS (accepted, the payer's bank
// has not answered) → RETURNED, or, when the payer's bank refuses it, back
// to REQUESTED under the next attempt, until the attempts run out: FAILED.
const (
	PixReturnRequested  PixReturnStatus = "REQUESTED"
	PixReturnInProgress PixReturnStatus = "IN_PROGRESS"
	PixReturnReturned   PixReturnStatus = "RETURNED"
	PixReturnFailed     PixReturnStatus = "FAILED"
)

// Final reports whether the return reached RETURNED or FAILED.
func (s PixReturnStatus) Final() bool { return s == PixReturnReturned || s == PixReturnFailed }

// PixReturnReason is why Quita owes a payer their Pix back.
type PixReturnReason string

// Pix return reasons.
const (
	// ReturnForPayerMismatch: the payer lock refused the payer.
	ReturnForPayerMismatch PixReturnReason = "payer_mismatch"
	// ReturnForWrongAmount: the amount differs from the charge's.
	ReturnForWrongAmount PixReturnReason = "wrong_amount"
	// ReturnForClosedCharge: the charge was no longer payable.
	ReturnForClosedCharge PixReturnReason = "charge_closed"
	// ReturnForCancelledHold: a charge holding the payer's money (held for
	// review) was cancelled.
	ReturnForCancelledHold PixReturnReason = "cancelled_hold"
)

// MaxReturnAttemptIDs is the most attempts a return's ids can name (one
// digit after the end-to-end id keeps them within API Pix's 35 characters).
const MaxReturnAttemptIDs = 9

// PixReturn is money Quita owes back to the payer of one received Pix,
// returned by devolução addressed by that Pix's end-to-end id. It holds no
// payer data: the acquirer knows where the Pix came from.
type PixReturn struct {
	// EndToEndID is the Pix returned; one return per Pix.
	EndToEndID string
	AccountID  string
	Mode       Mode
	// ChargeID is the charge the Pix was paid to.
	ChargeID string
	Amount   int64
	Reason   PixReturnReason
	Status   PixReturnStatus
	// Attempt numbers the devolução asked for now (from 1); its id at the
	// acquirer is AttemptID.
	Attempt int
	// ProviderRef is the acquirer's reference of the current attempt, once
	// accepted.
	ProviderRef string
	// Failure is why the payer's bank refused the last refused attempt.
	Failure string
	// DueAt is when a worker should look at the return next (zero: now).
	DueAt     time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewPixReturn owes the payer of Pix endToEndID, paid to charge c, amount.
func NewPixReturn(c *Charge, endToEndID string, amount int64, reason PixReturnReason, now time.Time) (PixReturn, error) {
	if !ValidEndToEndID(endToEndID) || amount <= 0 {
		return PixReturn{}, Invalid(FieldPayment, "a return needs the end-to-end id of the Pix and a positive amount")
	}
	now = now.UTC()
	return PixReturn{EndToEndID: endToEndID, AccountID: c.AccountID(), Mode: c.Mode(), ChargeID: c.ID(), Amount: amount,
		Reason: reason, Status: PixReturnRequested, Attempt: 1, CreatedAt: now, UpdatedAt: now}, nil
}

// ReturnAttemptID is the devolução id of attempt n of the return of Pix
// endToEndID: derived, so asking again after a crash or a lost answer is
// the same devolução, and new for every attempt, since API Pix answers a
// known id with the devolução it already has (a refused one stays
// refused). Attempt 1 is "D" + the end-to-end id without its "E" (32
// characters, the id used before attempts existed); attempt n > 1 appends
// "R" and n (34 characters). API Pix allows [a-zA-Z0-9]{1,35}.
func ReturnAttemptID(endToEndID string, n int) string {
	id := "D" + endToEndID[1:]
	if n <= 1 {
		return id
	}
	return id + "R" + strconv.Itoa(n)
}

// AttemptID is the devolução id of the current attempt.
func (r *PixReturn) AttemptID() string { return ReturnAttemptID(r.EndToEndID, r.Attempt) }

// Accept records that the acquirer accepted the current attempt:
// REQUESTED → IN_PROGRESS. due is when to ask how it went.
func (r *PixReturn) Accept(providerRef string, now, due time.Time) error {
	if r.Status != PixReturnRequested {
		return ErrInvalidTransition
	}
	r.Status, r.ProviderRef, r.DueAt, r.UpdatedAt = PixReturnInProgress, providerRef, due.UTC(), now.UTC()
	return nil
}

// Postpone makes an open return due again only at due: its acquirer
// cannot take it now for a reason time alone will not fix soon (Quita's
// credentials or the account's configuration). Nothing else changes.
func (r *PixReturn) Postpone(due time.Time) error {
	if r.Status != PixReturnRequested && r.Status != PixReturnInProgress {
		return ErrInvalidTransition
	}
	r.DueAt = due.UTC()
	return nil
}

// Confirm records that the payer's bank credited the current attempt:
// IN_PROGRESS → RETURNED.
func (r *PixReturn) Confirm(now time.Time) error {
	if r.Status != PixReturnInProgress {
		return ErrInvalidTransition
	}
	r.Status, r.DueAt, r.UpdatedAt = PixReturnReturned, time.Time{}, now.UTC()
	return nil
}

// Refuse records that the payer's bank refused the current attempt
// (failure says why): the next attempt is owed from due, under a new id,
// unless maxAttempts were made; then the return is FAILED and only an
// operator can give the money back.
func (r *PixReturn) Refuse(failure string, maxAttempts int, now, due time.Time) error {
	if r.Status != PixReturnInProgress {
		return ErrInvalidTransition
	}
	maxAttempts = min(max(maxAttempts, 1), MaxReturnAttemptIDs)
	r.Failure, r.ProviderRef, r.UpdatedAt = failure, "", now.UTC()
	if r.Attempt >= maxAttempts {
		r.Status, r.DueAt = PixReturnFailed, time.Time{}
		return nil
	}
	r.Status, r.Attempt, r.DueAt = PixReturnRequested, r.Attempt+1, due.UTC()
	return nil
}
