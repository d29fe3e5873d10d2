package ports

//go:generate go tool moq -rm -out ../mocks/batches.go -pkg mocks . ChargeBatchStore DueDateBatcher

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
)

// ChargeBatch is a batch of charge creates as stored: who asked, where it
// stands, and its items' counts, which the store keeps equal to its items'
// statuses (Total = Created + Refused + Pending).
type ChargeBatch struct {
	Scope
	ID     string
	Status domain.BatchStatus
	Total  int
	// Created, Refused and Pending count the items in each status.
	Created, Refused, Pending int
	// MerchantName and MerchantCity are the account's as the batch was
	// accepted: its charges are created with them.
	MerchantName, MerchantCity string
	// Lote is how far the batch's cobs were asked for together at the
	// acquirer (DueDateBatcher): LoteNone, LoteAsked, LoteOpened or
	// LoteSkipped.
	Lote        string
	CreatedAt   time.Time
	CompletedAt time.Time
}

// How far a batch's cobs were asked for together (ChargeBatch.Lote).
const (
	// LoteNone: not asked for together (the acquirer cannot, or the
	// batch's items go one by one).
	LoteNone = ""
	// LoteAsked: the items that carry a TxID were chosen and the acquirer
	// may have received them; asking again must name exactly those.
	LoteAsked = "asked"
	// LoteOpened: the acquirer accepted the request for them.
	LoteOpened = "opened"
	// LoteSkipped: the items go one by one (the acquirer refused the
	// request as a whole, or no item could be part of it).
	LoteSkipped = "skipped"
)

// ChargeBatchItem is one charge of a batch.
type ChargeBatchItem struct {
	Index  int
	Status domain.BatchItemStatus
	// Input is the item's create request as app encodes it (opaque to the
	// store).
	Input []byte
	// ChargeID is the raw id of the charge the item created.
	ChargeID string
	// Error is why the item was refused.
	Error *ChargeBatchError
	// Attempts counts the runs of the item that failed for a reason that
	// may pass (it stays pending).
	Attempts int
	// TxID is the txid the item's cob was asked for under in the batch's
	// request to the acquirer ("" when it was not part of one).
	TxID string
}

// ChargeBatchError is a refused item's error as the merchant reads it: the
// members of the API's error envelope and the HTTP status a create refused
// so would have answered.
type ChargeBatchError struct {
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

// ChargeBatchRef names one batch in its scope.
type ChargeBatchRef struct {
	Scope
	ID string
}

// ChargeBatchStore keeps batches of charge creates and their items.
type ChargeBatchStore interface {
	// CreateChargeBatch inserts rec, b and its items in one transaction.
	// ErrIdempotencyKeyExists when rec's key is used; nothing is written.
	CreateChargeBatch(ctx context.Context, b ChargeBatch, items []ChargeBatchItem, rec *IdempotencyRecord, leaseUntil time.Time) error
	// GetChargeBatch loads a batch of the scope with its items in index
	// order (Input included). ErrNotFound when it does not exist or belongs
	// to another account or mode.
	GetChargeBatch(ctx context.Context, scope Scope, id string) (*ChargeBatch, []ChargeBatchItem, error)
	// ClaimChargeBatches leases up to limit processing batches whose lease
	// has ended, in every scope, until leaseUntil; on Postgres with FOR
	// UPDATE SKIP LOCKED so concurrent workers claim different batches.
	ClaimChargeBatches(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ChargeBatchRef, error)
	// SaveChargeBatchItems writes, in one transaction, the status, charge,
	// error, attempts and txid of each of items (by Index) that is still
	// pending — an item already final is left as it is — counts the
	// batch's items again, completes the batch at now when none is left
	// pending, sets lote when it is not nil, and leases the batch until
	// leaseUntil. It returns the batch as saved. ErrNotFound when the batch
	// is not in scope.
	SaveChargeBatchItems(ctx context.Context, ref ChargeBatchRef, items []ChargeBatchItem, lote *string, now, leaseUntil time.Time) (*ChargeBatch, error)
	// ChargesByID loads the scope's charges among ids (raw), in any order;
	// an id that is not a charge of the scope is left out.
	ChargesByID(ctx context.Context, scope Scope, ids []string) ([]*domain.Charge, error)
}

// DueDateBatchRequest asks an acquirer for the cobs of many due-date
// charges at once. Each charge is what CreatePixCharge would be asked, its
// TxID chosen before the call (derived from the item's idempotency key),
// so that the item's own create meets its cob.
type DueDateBatchRequest struct {
	Scope
	// BatchID is the raw id of the batch: the acquirer derives its own id
	// of the request from it, so asking again names the same request.
	BatchID string
	Charges []CreatePixChargeRequest
}

// DueDateBatchItem is how one cob of a batch request stands at the
// acquirer.
type DueDateBatchItem struct {
	TxID string
	// Pending: the acquirer has not decided yet. Opened: the cob exists.
	// Otherwise Refusal is why it was refused (ErrAcquirerRejected and the
	// acquirer's problem).
	Pending, Opened bool
	Refusal         error
}

// DueDateBatcher is an optional acquirer capability: opening many due-date
// charges in one request (the API Pix's lotecobv). An acquirer without it
// opens them one by one through CreatePixCharge.
type DueDateBatcher interface {
	// SupportsDueDateBatches reports whether scope's due-date charges can
	// be asked for in batches.
	SupportsDueDateBatches(scope Scope) bool
	// OpenDueDateBatch asks for every cob of req. Asking again for the
	// same charges under the same BatchID is the same request. Errors:
	// ErrAcquirerRejected (the request as a whole was refused; nothing was
	// opened), ErrAcquirerUnavailable, ErrAcquirerUnauthorized,
	// ErrAcquirerNotConfigured (nothing is known: ask again).
	OpenDueDateBatch(ctx context.Context, req DueDateBatchRequest) error
	// DueDateBatchStatus reads how each cob of the batch stands. ErrNotFound
	// when the acquirer never received the request; the other errors as
	// OpenDueDateBatch's.
	DueDateBatchStatus(ctx context.Context, scope Scope, batchID string) ([]DueDateBatchItem, error)
}

// DueDateBatches is a's batch capability in scope, when it has one.
func DueDateBatches(a Acquirer, scope Scope) (DueDateBatcher, bool) {
	b, ok := a.(DueDateBatcher)
	if !ok || !b.SupportsDueDateBatches(scope) {
		return nil, false
	}
	return b, true
}
