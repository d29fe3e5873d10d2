package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Subaccount is a marketplace seller's account under the platform's.
type Subaccount struct {
	// ID is "acct_" and the raw id; name it in WithAccount to act for it.
	ID     string `json:"id"`
	Object string `json:"object"`
	Name   string `json:"name"`
	// Document is the seller's CPF or CNPJ, masked.
	Document string `json:"document"`
	Email    string `json:"email"`
	// PayoutPixKey is the seller's Pix key for payouts, masked; nil when none.
	PayoutPixKey *string `json:"payout_pix_key"`
	// AutoPayout pays the live available balance out to the payout key
	// once a day (Brasília), less the Pix-out fee.
	AutoPayout bool `json:"auto_payout"`
	// Status is "active" or "disabled".
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	DisabledAt *time.Time `json:"disabled_at"`
}

// SubaccountParams create a sub-account.
type SubaccountParams struct {
	Name string `json:"name"`
	// Document is a valid CPF or CNPJ (digits, or formatted).
	Document     string `json:"document"`
	Email        string `json:"email"`
	PayoutPixKey string `json:"payout_pix_key,omitempty"`
	// AutoPayout turns daily automatic payouts on; it needs PayoutPixKey.
	AutoPayout bool `json:"auto_payout,omitempty"`
	// IdempotencyKey; empty: the client generates one and reuses it for
	// its own retries.
	IdempotencyKey string `json:"-"`
}

// SubaccountUpdate changes a sub-account; nil fields stay. An empty
// PayoutPixKey removes the key (refused while AutoPayout is on).
type SubaccountUpdate struct {
	Name         *string `json:"name,omitempty"`
	Email        *string `json:"email,omitempty"`
	PayoutPixKey *string `json:"payout_pix_key,omitempty"`
	AutoPayout   *bool   `json:"auto_payout,omitempty"`
}

// SubaccountListParams page the sub-account list.
type SubaccountListParams struct {
	// Limit is the page size, 1–100 (default 25).
	Limit int
	// StartingAfter is the cursor: a sub-account id.
	StartingAfter string
}

func (p SubaccountListParams) query() url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.StartingAfter != "" {
		q.Set("starting_after", p.StartingAfter)
	}
	return q
}

// SubaccountList is one page of sub-accounts, newest first.
type SubaccountList struct {
	Object     string        `json:"object"`
	Data       []*Subaccount `json:"data"`
	HasMore    bool          `json:"has_more"`
	NextCursor *string       `json:"next_cursor"`
}

// SubaccountsService is /v1/subaccounts: a platform's sellers.
type SubaccountsService struct{ c *Client }

// WithAccount makes every request run as the sub-account id (the
// Quita-Account header): c.With(WithAccount(id)).Charges.Create(...)
// creates a charge of the seller, .Wallets reads its balance. Only the
// platform's key may name its own live sub-accounts; any other account is
// an *Error with code account_not_found.
func WithAccount(id string) Option { return func(c *Client) { c.account = strings.TrimSpace(id) } }

// Create creates a sub-account with its own wallets.
func (s *SubaccountsService) Create(ctx context.Context, p SubaccountParams) (*Subaccount, error) {
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out Subaccount
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/subaccounts", body: p, idemKey: p.IdempotencyKey}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get reads a sub-account (acct_...).
func (s *SubaccountsService) Get(ctx context.Context, id string) (*Subaccount, error) {
	var out Subaccount
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/subaccounts/" + pathID(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes a live sub-account's name, e-mail, payout key or
// automatic payouts.
func (s *SubaccountsService) Update(ctx context.Context, id string, p SubaccountUpdate) (*Subaccount, error) {
	var out Subaccount
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/subaccounts/" + pathID(id), body: p, class: notSentOnly}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Disable disables a sub-account: its keys stop working, it can no
// longer be named in splits or WithAccount.
func (s *SubaccountsService) Disable(ctx context.Context, id string) (*Subaccount, error) {
	var out Subaccount
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/subaccounts/" + pathID(id) + "/disable", class: notSentOnly}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPage reads one page of sub-accounts.
func (s *SubaccountsService) ListPage(ctx context.Context, p SubaccountListParams) (*SubaccountList, error) {
	var out SubaccountList
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/subaccounts", query: p.query()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List iterates over every sub-account, newest first, following the
// cursor.
func (s *SubaccountsService) List(ctx context.Context, p SubaccountListParams) iter.Seq2[*Subaccount, error] {
	return paginate(p, func(p SubaccountListParams) ([]*Subaccount, SubaccountListParams, bool, error) {
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

// Split gives a sub-account part of a charge's net: a fixed Amount
// (centavos) or a Percent of the net ("12.50"), exactly one.
type Split struct {
	Account string `json:"account"`
	Amount  *int64 `json:"amount,omitempty"`
	Percent string `json:"percent,omitempty"`
}

// ChargeSplit is a split as the charge shows it: Amount is nil while a
// percent split waits for the payment; Status is pending, paid or
// cancelled.
type ChargeSplit struct {
	Account string  `json:"account"`
	Amount  *int64  `json:"amount"`
	Percent *string `json:"percent"`
	Status  string  `json:"status"`
	// AmountReversed is what refunds and returns took back of the share.
	AmountReversed int64 `json:"amount_reversed"`
}

// PaymentSplit is a split as the payments format shows it: ChargeSplit's
// fields, the status upper-case (PENDING, PAID, CANCELLED).
type PaymentSplit struct {
	Account        string  `json:"account"`
	Amount         *int64  `json:"amount"`
	Percent        *string `json:"percent"`
	Status         string  `json:"status"`
	AmountReversed int64   `json:"amountReversed"`
}

// SplitReversal names what one split of a payment gives back of a refund
// (RefundParams.ReverseSplits).
type SplitReversal struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
}

// Fee payers of a split charge.
const (
	FeePayerPlatform     = "platform"
	FeePayerProportional = "proportional"
)
