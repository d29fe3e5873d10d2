package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Transfer is money moved between a platform and one of its sub-accounts.
// The same object is what transfer.created carries, also for a
// sub-account's share of a split charge (then SourceCharge is set).
type Transfer struct {
	// ID is "tr_" and the raw id.
	ID       string `json:"id"`
	Object   string `json:"object"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// SourceCharge is the split charge a share came from; nil for a
	// transfer made with Transfers.Create.
	SourceCharge *string `json:"source_charge"`
	// SourceAccount is the account the money left; Destination the one
	// it reached.
	SourceAccount string `json:"source_account"`
	Destination   string `json:"destination"`
	// Status is "paid": a transfer is done when it is created.
	Status      string         `json:"status"`
	Description *string        `json:"description"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"created_at"`
}

// TransferParams create a transfer.
type TransferParams struct {
	// Amount in minor units, > 0. Required.
	Amount int64 `json:"amount"`
	// Currency is the wallet's; empty is BRL.
	Currency string `json:"currency,omitempty"`
	// Destination is one of the platform's live sub-accounts (from the
	// platform), or the platform's own id (from a sub-account, or a
	// client WithAccount(sub-account)). Required.
	Destination string         `json:"destination"`
	Description string         `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// IdempotencyKey (8–128 characters); empty: the client generates one
	// and reuses it for its own retries.
	IdempotencyKey string `json:"-"`
}

// TransferListParams page the transfer list.
type TransferListParams struct {
	// Limit is the page size, 1–100 (default 25).
	Limit int
	// StartingAfter is the cursor: a transfer id.
	StartingAfter string
}

func (p TransferListParams) query() url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.StartingAfter != "" {
		q.Set("starting_after", p.StartingAfter)
	}
	return q
}

// TransferList is one page of transfers, newest first.
type TransferList struct {
	Object     string      `json:"object"`
	Data       []*Transfer `json:"data"`
	HasMore    bool        `json:"has_more"`
	NextCursor *string     `json:"next_cursor"`
}

// TransfersService is /v1/transfers: money between a platform and its
// sub-accounts.
type TransfersService struct{ c *Client }

// Create moves p.Amount from the caller's available balance to
// p.Destination at once. A balance that cannot cover it is an *Error with
// code insufficient_balance (422); a destination the caller may not send
// to, account_not_found (404).
func (s *TransfersService) Create(ctx context.Context, p TransferParams) (*Transfer, error) {
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out Transfer
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/transfers", body: p, idemKey: p.IdempotencyKey}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get reads a transfer the account sent or received (tr_... or raw id).
func (s *TransfersService) Get(ctx context.Context, id string) (*Transfer, error) {
	var out Transfer
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/transfers/" + pathID(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPage reads one page of the transfers the account sent or received.
func (s *TransfersService) ListPage(ctx context.Context, p TransferListParams) (*TransferList, error) {
	var out TransferList
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/transfers", query: p.query()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List iterates over every transfer the account sent or received, newest
// first, following the cursor.
func (s *TransfersService) List(ctx context.Context, p TransferListParams) iter.Seq2[*Transfer, error] {
	return paginate(p, func(p TransferListParams) ([]*Transfer, TransferListParams, bool, error) {
		page, err := s.ListPage(ctx, p)
		if err != nil {
			return nil, p, false, err
		}
		if page.NextCursor != nil {
			p.StartingAfter = *page.NextCursor
		}
		return page.Data, p, page.HasMore && page.NextCursor != nil, nil
	})
}
