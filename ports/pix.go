package ports

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
)

// CreatePixChargeRequest asks an acquirer for an immediate Pix charge (a
// cob). On the database path TxID is derived from the idempotency scope,
// so a retry asks for the same cob; a create that skipped the replay check
// (CobIntents) asks for a txid of its own attempt.
type CreatePixChargeRequest struct {
	Scope
	ChargeID     string
	TxID         string
	Amount       int64
	ExpiresAt    time.Time
	Description  string
	PayerTaxID   string
	PayerName    string
	MerchantName string
	MerchantCity string
	// Due, when set, makes a due-date charge (the API Pix's cobv): the
	// payer's bank asks the amount due on the day of payment, ExpiresAt is
	// the end of the last payable day, and the debtor (DebtorTaxID,
	// DebtorName: the customer, whoever pays) is required. Only an
	// acquirer that supports due-date charges takes it.
	Due         *domain.DueTerms
	DebtorTaxID string
	DebtorName  string
	// OpenedInBatch: the cob was asked for in a DueDateBatchRequest under
	// TxID and the acquirer reported it opened, so an acquirer that can
	// read it takes it rather than asking for it again. Acquirers without
	// DueDateBatcher ignore it.
	OpenedInBatch bool
}

// CreatePixChargeResponse is the acquirer's cob.
type CreatePixChargeResponse struct {
	BRCode      string
	TxID        string
	Location    string
	ExpiresAt   time.Time
	ProviderRef string
}

// CancelPixChargeRequest removes an unpaid cob.
type CancelPixChargeRequest struct {
	Scope
	ChargeID string
	TxID     string
}

// ReturnPixRequest returns money to a payer (a devolução addressed by the
// original end-to-end id). ReturnID is the idempotency key at the acquirer.
type ReturnPixRequest struct {
	Scope
	ChargeID   string
	EndToEndID string
	ReturnID   string
	Amount     int64
	Reason     string
}

// ReturnPixResponse is the acquirer's answer about one devolução: its
// reference and how it stands, IN_PROGRESS (accepted, the payer's bank has
// not answered), RETURNED (credited to the payer) or FAILED (refused by
// the payer's bank; Failure says why).
type ReturnPixResponse struct {
	ProviderRef string
	Status      domain.PixReturnStatus
	Failure     string
}

// ReturnPixStatusRequest asks how one devolução stands: the one of id
// ReturnID of Pix EndToEndID, accepted under ProviderRef.
type ReturnPixStatusRequest struct {
	Scope
	EndToEndID  string
	ReturnID    string
	ProviderRef string
}

// Acquirer is a provider that collects Pix for Quita (the sandbox, or a
// PSP bank through the Banco Central API Pix).
type Acquirer interface {
	// Name is the provider's stable name, kept with each charge.
	Name() string
	// CreatePixCharge creates (or, for a txid it has seen, returns) a cob.
	// Errors: ErrAcquirerUnavailable, ErrAcquirerRejected,
	// ErrAcquirerUnauthorized, ErrAcquirerNotConfigured.
	CreatePixCharge(ctx context.Context, req CreatePixChargeRequest) (*CreatePixChargeResponse, error)
	// CancelPixCharge removes a cob so it can no longer be paid.
	CancelPixCharge(ctx context.Context, req CancelPixChargeRequest) error
	// ReturnPix returns a received Pix to its payer. Idempotent by
	// ReturnID: a known id answers the devolução it already is, however it
	// ended. Errors: ErrAcquirerUnavailable, ErrAcquirerRejected.
	ReturnPix(ctx context.Context, req ReturnPixRequest) (*ReturnPixResponse, error)
	// ReturnPixStatus reads how a devolução stands at the acquirer.
	// ErrNotFound when the acquirer does not know it.
	ReturnPixStatus(ctx context.Context, req ReturnPixStatusRequest) (*ReturnPixResponse, error)
}

// SimulatePaymentRequest describes a payment the sandbox bank makes.
type SimulatePaymentRequest struct {
	ChargeID   string
	TxID       string
	Amount     int64
	PayerTaxID string
	PayerName  string
	// PaidAt is when the payer's bank makes the payment; zero is now.
	PaidAt time.Time
}

// PaymentSimulator is the sandbox's bank: it pays a cob as a payer's bank
// would and reports the Pix the acquirer would notify. Test mode only.
type PaymentSimulator interface {
	SimulatePixPayment(ctx context.Context, req SimulatePaymentRequest) (domain.PixPayment, error)
}
