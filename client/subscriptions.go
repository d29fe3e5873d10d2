package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// SubscriptionStatus is a subscription's status.
type SubscriptionStatus string

// Subscription statuses: pending_authorization → active (the payer
// authorised the mandate) → completed (its last cycle closed) or
// cancelled (by the merchant or the payer); a pending one may also be
// rejected or expire.
const (
	SubscriptionPendingAuthorization SubscriptionStatus = "pending_authorization"
	SubscriptionActive               SubscriptionStatus = "active"
	SubscriptionRejected             SubscriptionStatus = "rejected"
	SubscriptionExpired              SubscriptionStatus = "expired"
	SubscriptionCancelled            SubscriptionStatus = "cancelled"
	SubscriptionCompleted            SubscriptionStatus = "completed"
)

// Intervals, retry policies and journeys of a subscription.
const (
	IntervalWeekly     = "weekly"
	IntervalMonthly    = "monthly"
	IntervalQuarterly  = "quarterly"
	IntervalSemiannual = "semiannual"
	IntervalYearly     = "yearly"

	RetryNone             = "none"
	RetryThreeInSevenDays = "three_in_seven_days"

	JourneyAuthorizationRequest   = "authorization_request"
	JourneyQRCode                 = "qr_code"
	JourneyQRCodeWithFirstPayment = "qr_code_with_first_payment"
)

// Subscription is a payer's mandate for recurring Pix charges (Pix
// Automático) as /v1/subscriptions and the subscription.* webhooks show
// it. Each cycle is collected by a charge of its own
// (Subscriptions.Charges).
type Subscription struct {
	// ID is "sub_" and the raw id.
	ID     string             `json:"id"`
	Object string             `json:"object"`
	Status SubscriptionStatus `json:"status"`
	// CancelledBy is "merchant" or "payer" once cancelled.
	CancelledBy *string `json:"cancelled_by"`
	// Customer is the payer (masked document in lists).
	Customer SubscriptionCustomer `json:"customer"`
	// Amount is each cycle's amount; nil for a variable subscription.
	Amount   *int64          `json:"amount"`
	Variable *VariableAmount `json:"variable"`
	Currency string          `json:"currency"`
	Interval string          `json:"interval"`
	// StartDate and EndDate are YYYY-MM-DD in Brasília.
	StartDate   string  `json:"start_date"`
	EndDate     *string `json:"end_date"`
	Contract    string  `json:"contract"`
	Description *string `json:"description"`
	RetryPolicy string  `json:"retry_policy"`
	Journey     string  `json:"journey"`
	// FirstPayment is the immediate payment of a
	// qr_code_with_first_payment subscription.
	FirstPayment *FirstPayment `json:"first_payment"`
	// PayerAccount is the payer's account given at the create, masked.
	PayerAccount *PayerAccount `json:"payer_account"`
	// Pix is the QR code of a QR journey; HostedURL its hosted page.
	Pix                    *SubscriptionPix `json:"pix"`
	HostedURL              *string          `json:"hosted_url"`
	AuthorizationExpiresAt time.Time        `json:"authorization_expires_at"`
	NextCycle              *NextCycle       `json:"next_cycle"`
	// LatestCycle is the cycle that changed last; in a subscription.charge_*
	// event, the cycle the event is about.
	LatestCycle  *CycleSummary      `json:"latest_cycle"`
	Cycles       CycleCounts        `json:"cycles"`
	APIPix       SubscriptionAPIPix `json:"api_pix"`
	CreatedAt    time.Time          `json:"created_at"`
	AuthorizedAt *time.Time         `json:"authorized_at"`
	CancelledAt  *time.Time         `json:"cancelled_at"`
	EndedAt      *time.Time         `json:"ended_at"`
}

// VariableAmount is a variable subscription's cap (nil: none).
type VariableAmount struct {
	MaxAmount *int64 `json:"max_amount"`
}

// FirstPayment is a first payment and the charge that collects it.
type FirstPayment struct {
	Amount int64  `json:"amount"`
	Charge string `json:"charge"`
}

// SubscriptionPix is the code a QR-journey payer scans.
type SubscriptionPix struct {
	BRCode    string `json:"br_code"`
	QRCodeURL string `json:"qr_code_url"`
	// QRCodeBase64 is the PNG inline (Subscriptions.GetWithQRCode).
	QRCodeBase64 string `json:"qr_code_base64,omitempty"`
}

// NextCycle is the next cycle to schedule; Amount is nil for a variable
// cycle whose amount is not set yet.
type NextCycle struct {
	Cycle   int    `json:"cycle"`
	DueDate string `json:"due_date"`
	Amount  *int64 `json:"amount"`
}

// CycleSummary is one cycle: its due date, amount, charge and how its
// debits went (status scheduled, retrying, paid, failed or cancelled).
type CycleSummary struct {
	Cycle         int     `json:"cycle"`
	DueDate       string  `json:"due_date"`
	Amount        int64   `json:"amount"`
	Charge        string  `json:"charge"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	NextDebitDate *string `json:"next_debit_date"`
	FailureCode   *string `json:"failure_code"`
}

// CycleCounts counts a subscription's cycles by outcome.
type CycleCounts struct {
	Open    int `json:"open"`
	Paid    int `json:"paid"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// SubscriptionAPIPix names the subscription in the API Pix's words.
type SubscriptionAPIPix struct {
	RecID               *string `json:"rec_id"`
	RecStatus           string  `json:"rec_status"`
	SolicRecID          *string `json:"solicrec_id"`
	SolicRecStatus      *string `json:"solicrec_status"`
	Periodicidade       string  `json:"periodicidade"`
	PoliticaRetentativa string  `json:"politica_retentativa"`
	Jornada             string  `json:"jornada"`
}

// ChargeSubscription links a charge to the subscription cycle it
// collects (Cycle nil for a first payment).
type ChargeSubscription struct {
	ID           string  `json:"id"`
	Cycle        *int    `json:"cycle"`
	DueDate      *string `json:"due_date"`
	FirstPayment bool    `json:"first_payment"`
}

// SubscriptionParams create a subscription. Set exactly one of Amount and
// Variable.
type SubscriptionParams struct {
	// Customer is the payer: name and CPF or CNPJ. Required.
	Customer SubscriptionCustomer `json:"customer"`
	// Amount is each cycle's amount in centavos.
	Amount int64 `json:"amount,omitempty"`
	// Variable makes each cycle's amount set per cycle
	// (Subscriptions.SetNextAmount).
	Variable *VariableParams `json:"variable,omitempty"`
	// Interval is one of the Interval constants. Required.
	Interval string `json:"interval"`
	// StartDate is the first cycle's due date (YYYY-MM-DD, Brasília), at
	// least two days away. Required. EndDate, when set, is the last day
	// a cycle may fall due.
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date,omitempty"`
	// Contract is the merchant's reference (≤ 35 characters). Required.
	Contract string `json:"contract"`
	// Description is what the payer's bank shows (≤ 35 characters).
	Description string `json:"description,omitempty"`
	RetryPolicy string `json:"retry_policy,omitempty"`
	Journey     string `json:"journey,omitempty"`
	// FirstPayment is the immediate payment of
	// JourneyQRCodeWithFirstPayment.
	FirstPayment *FirstPaymentParams `json:"first_payment,omitempty"`
	// PayerAccount is where JourneyAuthorizationRequest's request goes;
	// an acquirer that needs it refuses without it (422
	// payer_account_required).
	PayerAccount *PayerAccountParams `json:"payer_account,omitempty"`
	// IdempotencyKey (8–128 characters); empty: the client generates one
	// and reuses it for its own retries.
	IdempotencyKey string `json:"-"`
}

// SubscriptionListParams filter and page the subscription list.
type SubscriptionListParams struct {
	// Limit is the page size, 1–100 (default 25).
	Limit int
	// StartingAfter is the cursor: a subscription id.
	StartingAfter string
	Status        SubscriptionStatus
}

func (p SubscriptionListParams) query() url.Values {
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

// SubscriptionList is one page of subscriptions, newest first.
type SubscriptionList struct {
	Object     string          `json:"object"`
	Data       []*Subscription `json:"data"`
	HasMore    bool            `json:"has_more"`
	NextCursor *string         `json:"next_cursor"`
}

// SubscriptionChargeListParams page a subscription's charges.
type SubscriptionChargeListParams struct {
	Limit         int
	StartingAfter string
}

func (p SubscriptionChargeListParams) query() url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.StartingAfter != "" {
		q.Set("starting_after", p.StartingAfter)
	}
	return q
}

// SubscriptionsService is /v1/subscriptions (Pix Automático).
type SubscriptionsService struct{ c *Client }

// Create opens a subscription, pending the payer's authorisation.
func (s *SubscriptionsService) Create(ctx context.Context, p SubscriptionParams) (*Subscription, error) {
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out Subscription
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/subscriptions", body: p, idemKey: p.IdempotencyKey}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get reads a subscription (sub_... or raw id).
func (s *SubscriptionsService) Get(ctx context.Context, id string) (*Subscription, error) {
	return s.get(ctx, id, nil)
}

// GetWithQRCode reads a subscription with its QR PNG inline
// (Pix.QRCodeBase64), for a QR journey.
func (s *SubscriptionsService) GetWithQRCode(ctx context.Context, id string) (*Subscription, error) {
	return s.get(ctx, id, url.Values{"include": {"qr_code_base64"}})
}

func (s *SubscriptionsService) get(ctx context.Context, id string, q url.Values) (*Subscription, error) {
	var out Subscription
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/subscriptions/" + pathID(id), query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Cancel ends a subscription: no further cycle; its open cycles are
// cancelled with their charges.
func (s *SubscriptionsService) Cancel(ctx context.Context, id string) (*Subscription, error) {
	return s.post(ctx, "/subscriptions/"+pathID(id)+"/cancel", nil)
}

// SetNextAmount sets the amount of a variable subscription's next cycle
// (before its window closes, up to its max_amount).
func (s *SubscriptionsService) SetNextAmount(ctx context.Context, id string, amount int64) (*Subscription, error) {
	return s.post(ctx, "/subscriptions/"+pathID(id)+"/charges", map[string]int64{"amount": amount})
}

func (s *SubscriptionsService) post(ctx context.Context, path string, body any) (*Subscription, error) {
	var out Subscription
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: path, body: body, class: notSentOnly}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPage reads one page of subscriptions.
func (s *SubscriptionsService) ListPage(ctx context.Context, p SubscriptionListParams) (*SubscriptionList, error) {
	var out SubscriptionList
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/subscriptions", query: p.query()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List iterates over every subscription matching p, newest first,
// following the cursor.
func (s *SubscriptionsService) List(ctx context.Context, p SubscriptionListParams) iter.Seq2[*Subscription, error] {
	return paginate(p, func(p SubscriptionListParams) ([]*Subscription, SubscriptionListParams, bool, error) {
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

// ChargesPage reads one page of a subscription's charges, latest cycle
// first.
func (s *SubscriptionsService) ChargesPage(ctx context.Context, id string, p SubscriptionChargeListParams) (*ChargeList, error) {
	var out ChargeList
	r := request{method: http.MethodGet, path: "/subscriptions/" + pathID(id) + "/charges", query: p.query()}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Charges iterates over every charge of a subscription, latest cycle
// first (the first payment last).
func (s *SubscriptionsService) Charges(ctx context.Context, id string) iter.Seq2[*Charge, error] {
	return paginate(SubscriptionChargeListParams{}, func(p SubscriptionChargeListParams) ([]*Charge, SubscriptionChargeListParams, bool, error) {
		page, err := s.ChargesPage(ctx, id, p)
		if err != nil {
			return nil, p, false, err
		}
		if page.NextCursor != nil {
			p.StartingAfter = *page.NextCursor
		}
		return page.Data, p, page.HasMore && page.NextCursor != nil, nil
	})
}

// AuthorizeSubscription is the payer authorising a test subscription's
// mandate (for JourneyQRCodeWithFirstPayment, paying the first payment).
func (s *TestHelpersService) AuthorizeSubscription(ctx context.Context, id string) (*Subscription, error) {
	return s.subscription(ctx, id, "authorize", nil)
}

// RejectSubscription is the payer rejecting a test subscription's mandate.
func (s *TestHelpersService) RejectSubscription(ctx context.Context, id string) (*Subscription, error) {
	return s.subscription(ctx, id, "reject", nil)
}

// RevokeSubscription is the payer revoking an active test subscription.
func (s *TestHelpersService) RevokeSubscription(ctx context.Context, id string) (*Subscription, error) {
	return s.subscription(ctx, id, "revoke", nil)
}

// AdvanceSubscription runs a test subscription's next cycle now: its
// debit is paid, or rejected when fail (then its retry policy decides).
func (s *TestHelpersService) AdvanceSubscription(ctx context.Context, id string, fail bool) (*Subscription, error) {
	return s.subscription(ctx, id, "advance", AdvanceParams{Fail: fail})
}

// AdvanceParams is the body of the advance test helper.
type AdvanceParams struct {
	Fail bool `json:"fail,omitempty"`
}

func (s *TestHelpersService) subscription(ctx context.Context, id, action string, body any) (*Subscription, error) {
	var out Subscription
	r := request{method: http.MethodPost, path: "/test_helpers/subscriptions/" + pathID(id) + "/" + action, body: body, class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Subscription decodes the subscription of a subscription.* event.
func (e *Event) Subscription() (*Subscription, error) {
	var s Subscription
	if err := decodeObject(e, "subscription", &s); err != nil {
		return nil, err
	}
	return &s, nil
}
