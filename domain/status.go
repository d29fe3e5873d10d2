package domain

import "fmt"

// TxStatus is the transaction status of the payments wire format. It is the
// status Quita stores; the public charge status is derived from it by
// Public. Values are API: add, never rename.
type TxStatus string

// Transaction statuses, as the spec names them.
const (
	TxPending        TxStatus = "PENDING"
	TxWaitingPayment TxStatus = "WAITING_PAYMENT"
	TxProcessing     TxStatus = "PROCESSING"
	TxPaid           TxStatus = "PAID"
	TxApproved       TxStatus = "APPROVED"
	TxRefused        TxStatus = "REFUSED"
	TxCancelled      TxStatus = "CANCELLED"
	TxExpired        TxStatus = "EXPIRED"
	TxRefunded       TxStatus = "REFUNDED"
	TxChargeback     TxStatus = "CHARGEBACK"
	TxDispute        TxStatus = "DISPUTE"
)

// TxStatuses lists every transaction status.
var TxStatuses = []TxStatus{
	TxPending, TxWaitingPayment, TxProcessing, TxPaid, TxApproved, TxRefused,
	TxCancelled, TxExpired, TxRefunded, TxChargeback, TxDispute,
}

// Status is the public charge status of the /v1/charges surface.
type Status string

// Public charge statuses.
const (
	StatusPending    Status = "pending"
	StatusProcessing Status = "processing"
	StatusPaid       Status = "paid"
	StatusFailed     Status = "failed"
	StatusExpired    Status = "expired"
	StatusCancelled  Status = "cancelled"
	StatusRefunded   Status = "refunded"
	StatusDisputed   Status = "disputed"
)

// Statuses lists every public status.
var Statuses = []Status{
	StatusPending, StatusProcessing, StatusPaid, StatusFailed,
	StatusExpired, StatusCancelled, StatusRefunded, StatusDisputed,
}

// Public maps a transaction status to the public vocabulary, exactly as the
// spec's mapping table.
func (s TxStatus) Public() Status {
	switch s {
	case TxPending, TxWaitingPayment:
		return StatusPending
	case TxProcessing:
		return StatusProcessing
	case TxPaid, TxApproved:
		return StatusPaid
	case TxRefused:
		return StatusFailed
	case TxCancelled:
		return StatusCancelled
	case TxExpired:
		return StatusExpired
	case TxRefunded:
		return StatusRefunded
	case TxChargeback, TxDispute:
		return StatusDisputed
	}
	panic(fmt.Sprintf("domain: unknown transaction status %q", string(s)))
}

// Valid reports whether s is a known transaction status.
func (s TxStatus) Valid() bool {
	_, ok := txTransitions[s]
	return ok
}

// Valid reports whether s is a known public status.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// TxStatuses returns the transaction statuses that map to the public status
// s, for filtering stored records by a public status.
func (s Status) TxStatuses() []TxStatus {
	var out []TxStatus
	for _, t := range TxStatuses {
		if t.Public() == s {
			out = append(out, t)
		}
	}
	return out
}

// Settled reports whether money has been received (PAID or APPROVED).
func (s TxStatus) Settled() bool { return s == TxPaid || s == TxApproved }

// Open reports whether the charge still awaits the payer.
func (s TxStatus) Open() bool { return s == TxPending || s == TxWaitingPayment }

// Terminal reports whether no further transition is possible.
func (s TxStatus) Terminal() bool { return len(txTransitions[s]) == 0 }

// txTransitions is the one transition table of transaction statuses. The
// spec's rows (create → WAITING_PAYMENT; cancel from WAITING_PAYMENT,
// PENDING, PROCESSING; full refund from PAID/APPROVED) are here, with the
// rest of the life the design fixes: a payer-lock mismatch is held
// (PROCESSING) until the payer's bank confirms its return (then REFUNDED),
// an undisclosed payer is held (PROCESSING), card charges may be disputed
// and charged back. A refund accepted before a dispute may complete during
// it: a full one closes the dispute as REFUNDED; a charge already charged
// back stays CHARGEBACK (the refund still settles, CompleteRefund).
// PENDING is public "pending" too, so a Pix payment reaching it follows
// the same payer-lock rows (PAID or PROCESSING) as WAITING_PAYMENT.
var txTransitions = map[TxStatus][]TxStatus{
	TxPending:        {TxWaitingPayment, TxProcessing, TxPaid, TxApproved, TxRefused, TxCancelled, TxExpired, TxRefunded},
	TxWaitingPayment: {TxProcessing, TxPaid, TxApproved, TxRefused, TxCancelled, TxExpired, TxRefunded},
	TxProcessing:     {TxPaid, TxApproved, TxRefused, TxCancelled, TxRefunded},
	TxPaid:           {TxRefunded, TxDispute, TxChargeback},
	TxApproved:       {TxRefunded, TxDispute, TxChargeback},
	TxDispute:        {TxApproved, TxPaid, TxChargeback, TxRefunded},
	TxRefused:        nil,
	TxCancelled:      nil,
	TxExpired:        nil,
	TxRefunded:       nil,
	TxChargeback:     nil,
}

// CanTransition reports whether from → to is in the transition table.
func CanTransition(from, to TxStatus) bool {
	for _, t := range txTransitions[from] {
		if t == to {
			return true
		}
	}
	return false
}

// Method is a payment method of the payments surface.
type Method string

// Payment methods. The charges surface only knows pix.
const (
	MethodPix        Method = "PIX"
	MethodCreditCard Method = "CREDIT_CARD"
	MethodMBWay      Method = "MBWAY"
	MethodMultibanco Method = "MULTIBANCO"
	MethodBoleto     Method = "BOLETO"
	MethodCrypto     Method = "CRYPTO"
)

// Methods lists every payment method.
var Methods = []Method{MethodPix, MethodCreditCard, MethodMBWay, MethodMultibanco, MethodBoleto, MethodCrypto}

// Valid reports whether m is a known method.
func (m Method) Valid() bool {
	for _, v := range Methods {
		if v == m {
			return true
		}
	}
	return false
}
