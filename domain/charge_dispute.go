package domain

import (
	"errors"
	"slices"
	"time"
)

// DisputeReason is why a payer's bank took money back from a Pix the
// merchant was credited for. Values are API: add, never rename.
type DisputeReason string

// Dispute reasons, after the devolução natures of the MED (Mecanismo
// Especial de Devolução) in API Pix.
const (
	// DisputeFraud: MED_FRAUDE, a return for fraud.
	DisputeFraud DisputeReason = "fraud"
	// DisputeOperational: MED_OPERACIONAL, a return for an operational
	// error of a PSP.
	DisputeOperational DisputeReason = "operational"
	// DisputePixAutomatico: MED_PIX_AUTOMATICO, a contested recurring
	// debit.
	DisputePixAutomatico DisputeReason = "pix_automatico"
	// DisputeOther: a devolução Quita did not ask for, of any other
	// nature.
	DisputeOther DisputeReason = "other"
)

// Valid reports whether r is a known reason.
func (r DisputeReason) Valid() bool {
	switch r {
	case DisputeFraud, DisputeOperational, DisputePixAutomatico, DisputeOther:
		return true
	}
	return false
}

// Dispute is money the payer's PSP took back from a credited Pix without
// Quita asking: a MED return. It is debited from the merchant.
type Dispute struct {
	// ReturnID is the devolução's id at the PSP; one dispute per id.
	ReturnID string
	// EndToEndID is the Pix it took money from.
	EndToEndID string
	Amount     int64
	Reason     DisputeReason
	// At is when the money left, as the PSP reports it.
	At time.Time
}

// Errors of disputes.
var (
	// ErrChargeNotDisputable: only a charge whose Pix was credited to the
	// merchant can lose money to a MED return.
	ErrChargeNotDisputable = errors.New("the charge was not credited to the merchant")
	// ErrDisputeExceedsAmount: the dispute would take back more than the
	// payment left after its refunds (in flight or done) and earlier
	// disputes.
	ErrDisputeExceedsAmount = errors.New("the dispute exceeds what the payment left")
)

// maxReturnIDLen bounds a devolução id (API Pix: [a-zA-Z0-9]{1,35}).
const maxReturnIDLen = 35

// RecordDispute records a return the payer's PSP made from the charge's
// credited Pix. It reports false, changing nothing, when a dispute of
// that return id is recorded already, so a callback and a reconciliation
// pass that both see it record it once. The charge becomes DISPUTE where
// the transition table allows (PAID, APPROVED); one already disputed,
// charged back or refunded keeps its status. It changes nothing when it
// fails.
func (c *Charge) RecordDispute(d Dispute, now time.Time) (bool, error) {
	if slices.ContainsFunc(c.s.Disputes, func(x Dispute) bool { return x.ReturnID == d.ReturnID }) {
		return false, nil
	}
	if d.ReturnID == "" || len(d.ReturnID) > maxReturnIDLen || d.Amount <= 0 || !d.Reason.Valid() || d.At.IsZero() {
		return false, Invalid(FieldPayment, "a dispute needs a return id, a positive amount, a reason and a time")
	}
	st := c.s.Settlement
	if !c.Credited() || st == nil || st.PaidWith != MethodPix || st.EndToEndID == "" ||
		(d.EndToEndID != "" && d.EndToEndID != st.EndToEndID) {
		return false, ErrChargeNotDisputable
	}
	if d.Amount > c.RefundableAmount() {
		// A refund in flight counts: the PSP takes back no more than the
		// Pix, so a MED return beside it means that refund will fail, and
		// the return fits once it has.
		return false, ErrDisputeExceedsAmount
	}
	d.EndToEndID, d.At = st.EndToEndID, d.At.UTC()
	c.s.Disputes = append(slices.Clone(c.s.Disputes), d)
	c.s.UpdatedAt = now.UTC()
	if CanTransition(c.s.Status, TxDispute) {
		c.s.Status = TxDispute
	}
	return true, nil
}

// Disputes returns the disputes recorded, oldest first.
func (c *Charge) Disputes() []Dispute { return slices.Clone(c.s.Disputes) }

// DisputedAmount is what disputes took back from the payment.
func (c *Charge) DisputedAmount() int64 {
	var n int64
	for _, d := range c.s.Disputes {
		n += d.Amount
	}
	return n
}
