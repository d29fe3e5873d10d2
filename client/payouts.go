package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// PayoutStatus is a payout's status.
type PayoutStatus string

// Payout statuses: pending (held, not sent yet) → processing (the PSP
// accepted the Pix) → paid or failed; a pending payout may be cancelled.
const (
	PayoutPending    PayoutStatus = "pending"
	PayoutProcessing PayoutStatus = "processing"
	PayoutPaid       PayoutStatus = "paid"
	PayoutFailed     PayoutStatus = "failed"
	PayoutCancelled  PayoutStatus = "cancelled"
)

// Pix key types of a payout destination. Empty: detected from the key.
const (
	PixKeyCPF   = "cpf"
	PixKeyCNPJ  = "cnpj"
	PixKeyEmail = "email"
	PixKeyPhone = "phone"
	PixKeyEVP   = "evp"
)

// Payout is a withdrawal of the available balance to a Pix key.
type Payout struct {
	// ID is "po_" and the raw id.
	ID     string `json:"id"`
	Object string `json:"object"`
	// Amount is what the receiver gets (minor units); Fee is debited on top.
	Amount      int64             `json:"amount"`
	Currency    string            `json:"currency"`
	Status      PayoutStatus      `json:"status"`
	Destination PayoutDestination `json:"destination"`
	Fee         int64             `json:"fee"`
	// EndToEndID is the Pix's id once sent.
	EndToEndID *string `json:"end_to_end_id"`
	// FailureCode and FailureMessage say why a payout failed.
	FailureCode    *string        `json:"failure_code"`
	FailureMessage *string        `json:"failure_message"`
	Description    *string        `json:"description"`
	Metadata       map[string]any `json:"metadata"`
	CreatedAt      time.Time      `json:"created_at"`
	PaidAt         *time.Time     `json:"paid_at"`
	FailedAt       *time.Time     `json:"failed_at"`
	CancelledAt    *time.Time     `json:"cancelled_at"`
}

// PayoutDestination is the payout's Pix key, masked.
type PayoutDestination struct {
	Type string `json:"type"`
	Key  string `json:"key"`
}

// PayoutParams create a payout.
type PayoutParams struct {
	// Amount in minor units, > 0. Required.
	Amount int64 `json:"amount"`
	// Currency is BRL (the default and only value).
	Currency string `json:"currency,omitempty"`
	// Destination is the receiver's Pix key. Required, except for a
	// sub-account (a client WithAccount), whose payout without one goes
	// to its payout_pix_key.
	Destination PayoutKey      `json:"destination,omitzero"`
	Description string         `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// IdempotencyKey (8–128 characters); empty: the client generates one
	// and reuses it for its own retries.
	IdempotencyKey string `json:"-"`
}

// PayoutKey names a Pix key to pay.
type PayoutKey struct {
	PixKey string `json:"pix_key"`
	// Type is one of the PixKey constants; empty detects it.
	Type string `json:"type,omitempty"`
}

// PayoutListParams filter and page the payout list.
type PayoutListParams struct {
	// Limit is the page size, 1–100 (default 25).
	Limit int
	// StartingAfter is the cursor: a payout id.
	StartingAfter string
	Status        PayoutStatus
}

func (p PayoutListParams) query() url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.StartingAfter != "" {
		q.Set("starting_after", p.StartingAfter)
	}
	if p.Status != "" {
		q.Set("status", string(p.Status))
	}
	return q
}

// PayoutList is one page of payouts, newest first.
type PayoutList struct {
	Object     string    `json:"object"`
	Data       []*Payout `json:"data"`
	HasMore    bool      `json:"has_more"`
	NextCursor *string   `json:"next_cursor"`
}

// PayoutsService is /v1/payouts.
type PayoutsService struct{ c *Client }

// Create pays amount out of the available balance to a Pix key. The
// amount and the fee are held at once; a balance that cannot cover them
// is an *Error with code insufficient_balance (422).
func (s *PayoutsService) Create(ctx context.Context, p PayoutParams) (*Payout, error) {
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out Payout
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/payouts", body: p, idemKey: p.IdempotencyKey}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get reads a payout (po_... or raw id).
func (s *PayoutsService) Get(ctx context.Context, id string) (*Payout, error) {
	var out Payout
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payouts/" + pathID(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Cancel cancels a payout still pending; the held amount is released.
func (s *PayoutsService) Cancel(ctx context.Context, id string) (*Payout, error) {
	var out Payout
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/payouts/" + pathID(id) + "/cancel", class: notSentOnly}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Receipt fetches the receipt of a paid payout (comprovante de
// transferência), in lang ("en") when given.
func (s *PayoutsService) Receipt(ctx context.Context, id string, lang ...string) (*Receipt, error) {
	return s.c.receipt(ctx, "/payouts/"+pathID(id)+"/receipt", lang)
}

// ListPage reads one page of payouts.
func (s *PayoutsService) ListPage(ctx context.Context, p PayoutListParams) (*PayoutList, error) {
	var out PayoutList
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payouts", query: p.query()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List iterates over every payout matching p, newest first, following the
// cursor.
func (s *PayoutsService) List(ctx context.Context, p PayoutListParams) iter.Seq2[*Payout, error] {
	return paginate(p, func(p PayoutListParams) ([]*Payout, PayoutListParams, bool, error) {
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

// PayPayout settles a test payout as the PSP would (paid).
func (s *TestHelpersService) PayPayout(ctx context.Context, id string) (*Payout, error) {
	var out Payout
	r := request{method: http.MethodPost, path: "/test_helpers/payouts/" + pathID(id) + "/pay", class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// FailPayout fails a test payout with failureCode (empty:
// rejected_by_psp); the held amount is released.
func (s *TestHelpersService) FailPayout(ctx context.Context, id, failureCode string) (*Payout, error) {
	var out Payout
	r := request{method: http.MethodPost, path: "/test_helpers/payouts/" + pathID(id) + "/fail", class: notSentOnly}
	if failureCode != "" {
		r.body = map[string]string{"failure_code": failureCode}
	}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Payout decodes the payout of a payout.* event.
func (e *Event) Payout() (*Payout, error) {
	var p Payout
	if err := decodeObject(e, "payout", &p); err != nil {
		return nil, err
	}
	return &p, nil
}
