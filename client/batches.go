package client

import (
	"context"
	"net/http"
	"time"
)

// MaxBatchCharges is the most charges one batch may ask for.
const MaxBatchCharges = 1000

// ChargeBatchStatus is where a batch stands: processing while any item is
// pending, then completed for good.
type ChargeBatchStatus string

// Batch statuses.
const (
	ChargeBatchProcessing ChargeBatchStatus = "processing"
	ChargeBatchCompleted  ChargeBatchStatus = "completed"
)

// Batch item statuses: pending until the item's charge is created or the
// item is refused.
const (
	BatchItemPending = "pending"
	BatchItemCreated = "created"
	BatchItemRefused = "refused"
)

// ChargeBatchParams create up to MaxBatchCharges due-date charges in one
// call.
type ChargeBatchParams struct {
	// Charges are due-date creates: each needs DueDate and a Customer with
	// a name and a CPF/CNPJ; PaymentMethod defaults to "pix". An item that
	// breaks a rule is refused on its own.
	Charges []ChargeParams `json:"charges"`
	// IdempotencyKey (8–128 characters) makes the batch safe to retry: the
	// same key and charges answer the batch first accepted. Empty: the
	// client generates one, and reuses it for its own retries.
	IdempotencyKey string `json:"-"`
}

// ChargeBatch is a batch of charge creates. Total = Created + Refused +
// Pending.
type ChargeBatch struct {
	// ID is "chbatch_" and the raw id.
	ID string `json:"id"`
	// Object is always "charge_batch".
	Object      string            `json:"object"`
	Status      ChargeBatchStatus `json:"status"`
	Total       int               `json:"total"`
	Created     int               `json:"created"`
	Refused     int               `json:"refused"`
	Pending     int               `json:"pending"`
	CreatedAt   time.Time         `json:"created_at"`
	CompletedAt *time.Time        `json:"completed_at"`
	// Items are the batch's charges in the request's order.
	Items []ChargeBatchItem `json:"items"`
}

// ChargeBatchItem is one charge of a batch: its Charge once created
// (documents masked, as in lists; Charges.GetBatch only), its Error once
// refused.
type ChargeBatchItem struct {
	Index  int             `json:"index"`
	Status string          `json:"status"`
	Charge *Charge         `json:"charge,omitempty"`
	Error  *BatchItemError `json:"error,omitempty"`
}

// BatchItemError is why an item was refused: the error its create alone
// would have had, Param naming the parameter as it sits in the item.
type BatchItemError struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

// CreateBatch sends a batch of due-date charges (POST
// /v1/charges/batch). The server answers at once: each item pending, or
// refused with its error; the charges are created afterwards, each once.
// Read the batch with GetBatch (or WaitBatch) until it is completed.
func (s *ChargesService) CreateBatch(ctx context.Context, p ChargeBatchParams) (*ChargeBatch, error) {
	b, _, err := s.CreateBatchWithResponse(ctx, p)
	return b, err
}

// CreateBatchWithResponse is CreateBatch, also returning the response's
// metadata: Replayed tells a retry that found the batch first accepted.
func (s *ChargesService) CreateBatchWithResponse(ctx context.Context, p ChargeBatchParams) (*ChargeBatch, *Response, error) {
	charges := make([]ChargeParams, len(p.Charges))
	for i, c := range p.Charges {
		if c.PaymentMethod == "" {
			c.PaymentMethod = "pix"
		}
		charges[i] = c
	}
	p.Charges = charges
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out ChargeBatch
	resp, err := s.c.do(ctx, request{method: http.MethodPost, path: "/charges/batch", body: p, idemKey: p.IdempotencyKey}, &out)
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// GetBatch reads a batch by id (chbatch_... or raw) with its items and
// their charges. Another account's batch is ErrNotFound.
func (s *ChargesService) GetBatch(ctx context.Context, id string) (*ChargeBatch, error) {
	var out ChargeBatch
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/charges/batch/" + pathID(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WaitBatch reads the batch every interval (one second when zero) until
// it is completed, and returns it; it stops with ctx's error.
func (s *ChargesService) WaitBatch(ctx context.Context, id string, interval time.Duration) (*ChargeBatch, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for {
		b, err := s.GetBatch(ctx, id)
		if err != nil || b.Status == ChargeBatchCompleted {
			return b, err
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
