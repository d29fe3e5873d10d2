package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ChargeStatus is a charge's status in the public vocabulary.
type ChargeStatus string

// Charge statuses. New values may appear: treat an unknown one as "not
// final yet" and read the charge again later.
const (
	ChargePending    ChargeStatus = "pending"
	ChargeProcessing ChargeStatus = "processing"
	ChargePaid       ChargeStatus = "paid"
	ChargeFailed     ChargeStatus = "failed"
	ChargeExpired    ChargeStatus = "expired"
	ChargeCancelled  ChargeStatus = "cancelled"
	ChargeRefunded   ChargeStatus = "refunded"
	ChargeDisputed   ChargeStatus = "disputed"
)

// Charge is a Pix charge as /v1/charges and the charge.* webhooks show it.
// Store ID and reconcile by it; Pix.TxID and Settlement.EndToEndID are
// Pix context only.
type Charge struct {
	// ID is "ch_" and the raw id.
	ID string `json:"id"`
	// Object is always "charge".
	Object string `json:"object"`
	// Amount is in minor units (centavos).
	Amount        int64        `json:"amount"`
	Currency      string       `json:"currency"`
	Status        ChargeStatus `json:"status"`
	PaymentMethod string       `json:"payment_method"`
	Customer      Customer     `json:"customer"`
	// Pix is nil when the charge has no Pix data (it has usually failed).
	Pix *Pix `json:"pix,omitempty"`
	// CheckoutURL is the hosted checkout page for the payer.
	CheckoutURL string     `json:"checkout_url"`
	Settlement  Settlement `json:"settlement"`
	// Disputes are the returns the payer's PSP made from the payment
	// without the merchant asking (MED), each debited from the wallet;
	// empty until one happens.
	Disputes []Dispute `json:"disputes,omitempty"`
	// Metadata is returned as sent (numbers as json.Number), with the
	// create's description as metadata["description"].
	Metadata map[string]any `json:"metadata"`
	// ExpectedPayerTaxID is the payer lock, when set (masked in lists).
	ExpectedPayerTaxID string `json:"expected_payer_tax_id,omitempty"`
	// DueDate (YYYY-MM-DD) and its rules, for a due-date charge; empty for
	// an immediate one.
	DueDate      string        `json:"due_date,omitempty"`
	DaysAfterDue int           `json:"days_after_due,omitempty"`
	Fine         *DueFine      `json:"fine,omitempty"`
	Interest     *DueInterest  `json:"interest,omitempty"`
	Discount     *DueDiscount  `json:"discount,omitempty"`
	Abatement    *DueAbatement `json:"abatement,omitempty"`
	// Splits are a split charge's shares, each with its status, and
	// FeePayer who bore the fees; empty for other charges.
	Splits   []ChargeSplit `json:"splits,omitempty"`
	FeePayer string        `json:"fee_payer,omitempty"`
	// Paid is a credited due-date charge's payment and its parts.
	Paid *DuePaid `json:"paid,omitempty"`
	// Subscription links the charge of a subscription's cycle (or first
	// payment); nil for any other charge. A cycle's charge is debited: its
	// Pix.BRCode is empty.
	Subscription *ChargeSubscription `json:"subscription,omitempty"`
	CreatedAt    time.Time           `json:"created_at"`
}

// Customer is the payer as the merchant described them. In lists the
// document is masked.
type Customer struct {
	Name     string `json:"name,omitempty"`
	Document string `json:"document,omitempty"`
	Email    string `json:"email,omitempty"`
	Phone    string `json:"phone,omitempty"`
}

// Pix is the Pix block of a charge.
type Pix struct {
	// BRCode is the copy-and-paste payload.
	BRCode string `json:"br_code"`
	// QRCodeURL is a PNG of the BR Code anyone with the link can load.
	QRCodeURL string `json:"qr_code_url,omitempty"`
	// QRCodeBase64 is the PNG inline (Charges.Get with IncludeQRCode).
	QRCodeBase64 string `json:"qr_code_base64,omitempty"`
	// ExpiresAt is the authoritative expiry.
	ExpiresAt time.Time `json:"expires_at"`
	// TxID is the Pix txid, when the provider bound one.
	TxID string `json:"txid,omitempty"`
}

// Settlement is empty until the charge is paid.
type Settlement struct {
	EndToEndID string `json:"end_to_end_id,omitempty"`
}

// Dispute is money the payer's PSP took back from a charge's payment
// under the MED (Mecanismo Especial de Devolução).
type Dispute struct {
	Amount int64 `json:"amount"`
	// Reason is fraud, operational, pix_automatico or other.
	Reason     string    `json:"reason"`
	EndToEndID string    `json:"end_to_end_id"`
	ReturnID   string    `json:"return_id"`
	ReturnedAt time.Time `json:"returned_at"`
}

// ChargeParams create a charge.
type ChargeParams struct {
	// Amount in minor units, > 0. Required.
	Amount int64 `json:"amount"`
	// Currency defaults to BRL, the only one Pix accepts.
	Currency string `json:"currency,omitempty"`
	// PaymentMethod defaults to "pix", the only accepted value.
	PaymentMethod string `json:"payment_method"`
	// Description (≤ 500 characters) comes back as metadata.description.
	Description string `json:"description,omitempty"`
	// ExpiresIn is the Pix window in seconds (60–86400); 0 takes the
	// account's default (usually 3600).
	ExpiresIn int64     `json:"expires_in,omitempty"`
	Customer  *Customer `json:"customer,omitempty"`
	// ExpectedPayerTaxID locks the charge to one payer's CPF or CNPJ;
	// it needs Customer.Name. Anyone else's payment is returned.
	ExpectedPayerTaxID string         `json:"expected_payer_tax_id,omitempty"`
	Metadata           map[string]any `json:"metadata,omitempty"`
	// DueDate (YYYY-MM-DD, Brasília) makes a due-date charge, payable until
	// DaysAfterDue (default 30) days after it, for the amount its rules
	// give on the day of payment; it needs Customer with a name and a
	// CPF/CNPJ and no ExpiresIn.
	DueDate      string        `json:"due_date,omitempty"`
	DaysAfterDue *int          `json:"days_after_due,omitempty"`
	Fine         *DueFine      `json:"fine,omitempty"`
	Interest     *DueInterest  `json:"interest,omitempty"`
	Discount     *DueDiscount  `json:"discount,omitempty"`
	Abatement    *DueAbatement `json:"abatement,omitempty"`
	// Splits share the net among the platform's sub-accounts (at most
	// 20); FeePayer is FeePayerPlatform (default) or FeePayerProportional.
	Splits   []Split `json:"splits,omitempty"`
	FeePayer string  `json:"fee_payer,omitempty"`
	// IdempotencyKey (8–128 characters) makes the create safe to retry:
	// the same key and body return the original charge. Empty: the
	// client generates one, and reuses it for its own retries.
	IdempotencyKey string `json:"-"`
}

// ChargesService is /v1/charges.
type ChargesService struct{ c *Client }

// Create creates a Pix charge (POST /v1/charges) and returns it with its
// BR Code and checkout URL.
func (s *ChargesService) Create(ctx context.Context, p ChargeParams) (*Charge, error) {
	ch, _, err := s.CreateWithResponse(ctx, p)
	return ch, err
}

// CreateWithResponse is Create, also returning the response's metadata:
// Replayed tells a retry that found the original charge.
func (s *ChargesService) CreateWithResponse(ctx context.Context, p ChargeParams) (*Charge, *Response, error) {
	if p.PaymentMethod == "" {
		p.PaymentMethod = "pix"
	}
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out Charge
	resp, err := s.c.do(ctx, request{method: http.MethodPost, path: "/charges", body: p, idemKey: p.IdempotencyKey}, &out)
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// GetOptions tune Charges.Get.
type GetOptions struct {
	// IncludeQRCode adds the QR PNG as Pix.QRCodeBase64.
	IncludeQRCode bool
}

// Get reads a charge by id (ch_..., tx_... or raw). Another account's
// charge is ErrNotFound.
func (s *ChargesService) Get(ctx context.Context, id string, opts ...GetOptions) (*Charge, error) {
	r := request{method: http.MethodGet, path: "/charges/" + pathID(id)}
	for _, o := range opts {
		if o.IncludeQRCode {
			r.query = url.Values{"include": {"qr_code_base64"}}
		}
	}
	var out Charge
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChargeListParams filter and page the charge list. Zero values are
// unset.
type ChargeListParams struct {
	// Limit is the page size, 1–100 (default 25).
	Limit int
	// StartingAfter is the cursor: a charge id; the page starts after it.
	StartingAfter string
	Status        ChargeStatus
	// CreatedAfter and CreatedBefore bound created_at, inclusive.
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// CustomerID filters by payer document.
	CustomerID string
}

func (p ChargeListParams) query() url.Values {
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
	if !p.CreatedAfter.IsZero() {
		q.Set("created_after", p.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !p.CreatedBefore.IsZero() {
		q.Set("created_before", p.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	if p.CustomerID != "" {
		q.Set("customer_id", p.CustomerID)
	}
	return q
}

// ChargeList is one page of charges, newest first.
type ChargeList struct {
	Object  string    `json:"object"`
	Data    []*Charge `json:"data"`
	HasMore bool      `json:"has_more"`
	// NextCursor is the StartingAfter of the next page (nil on the last).
	NextCursor *string `json:"next_cursor"`
}

// ListPage reads one page of charges (GET /v1/charges).
func (s *ChargesService) ListPage(ctx context.Context, p ChargeListParams) (*ChargeList, error) {
	var out ChargeList
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/charges", query: p.query()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List iterates over every charge matching p, newest first, following the
// cursor page by page (p.Limit is the page size). An error ends the
// iteration after being yielded once; stop early with break.
//
//	for ch, err := range qc.Charges.List(ctx, client.ChargeListParams{Status: client.ChargePaid}) {
//		if err != nil { return err }
//		fmt.Println(ch.ID)
//	}
func (s *ChargesService) List(ctx context.Context, p ChargeListParams) iter.Seq2[*Charge, error] {
	return paginate(p, func(p ChargeListParams) ([]*Charge, ChargeListParams, bool, error) {
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

// paginate yields the items of page after page: fetch reads the page of
// p and returns its items, the params of the next page and whether there
// is one. Each loop over the result starts again from first.
func paginate[P, T any](first P, fetch func(P) (items []T, next P, more bool, err error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		p := first
		for {
			items, next, more, err := fetch(p)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			// A page may be empty and still have more (an events page
			// whose filter matched none of the rows it examined).
			if !more {
				return
			}
			p = next
		}
	}
}

// unique drops items seq already yielded (by id): offset pages shift when
// items are created during a walk, which would yield some twice.
func unique[T any](seq iter.Seq2[T, error], id func(T) string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		seen := map[string]bool{}
		for it, err := range seq {
			if err == nil {
				if seen[id(it)] {
					continue
				}
				seen[id(it)] = true
			}
			if !yield(it, err) {
				return
			}
		}
	}
}
