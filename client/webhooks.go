package client

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Event names a merchant may subscribe an endpoint to. The catalog
// (Webhooks.EventCatalog) is the complete, current list.
const (
	EventChargeCreated  = "charge.created"
	EventChargePaid     = "charge.paid"
	EventChargeFailed   = "charge.failed"
	EventChargeExpired  = "charge.expired"
	EventChargeRefunded = "charge.refunded"
	EventChargeDisputed = "charge.disputed"
	EventChargeOverdue  = "charge.overdue"
	EventPayoutCreated  = "payout.created"
	EventPayoutPaid     = "payout.paid"
	EventPayoutFailed   = "payout.failed"
	// EventTransferCreated: money moved between a platform and its
	// sub-account (a transfer, or a sub-account's share of a split
	// charge); data.object is a Transfer.
	EventTransferCreated = "transfer.created"

	// Legacy family (legacy envelope, sha256= signatures).
	EventPaymentCreated          = "payment.created"
	EventPaymentCompleted        = "payment.completed"
	EventPaymentFailed           = "payment.failed"
	EventPaymentExpired          = "payment.expired"
	EventPaymentRefunded         = "payment.refunded"
	EventPaymentStatusChanged    = "payment.status_changed"
	EventWithdrawalCreated       = "withdrawal.created"
	EventWithdrawalCompleted     = "withdrawal.completed"
	EventWithdrawalFailed        = "withdrawal.failed"
	EventWithdrawalStatusChanged = "withdrawal.status_changed"
)

// Endpoint statuses.
const (
	EndpointActive   = "ACTIVE"
	EndpointInactive = "INACTIVE"
)

// WebhookEndpoint is a registered receiver of events.
type WebhookEndpoint struct {
	// ID is "we_" and the raw id.
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// Status is EndpointActive or EndpointInactive.
	Status string `json:"status"`
	// Secret (64 hex characters) signs deliveries. It is returned only by
	// Create; store it, and get a new one with RotateSecret.
	Secret string `json:"secret,omitempty"`
	// CreatedAt and UpdatedAt are zero in the answer of Update.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// EndpointParams register an endpoint.
type EndpointParams struct {
	// URL receives the deliveries: public https in live mode.
	URL string `json:"url"`
	// Events to deliver (names from the catalog).
	Events []string `json:"events"`
	// IdempotencyKey (8–128 characters), when set, makes the registration
	// safe to retry: the same key and params return the first endpoint,
	// its secret included, instead of registering another. The client then
	// retries it as it does a money write. Empty: no key, no resend once
	// the request may have reached the server.
	IdempotencyKey string `json:"-"`
}

// EndpointUpdate changes an endpoint; nil fields are left as they are.
type EndpointUpdate struct {
	URL    *string   `json:"url,omitempty"`
	Events *[]string `json:"events,omitempty"`
	// Status is EndpointActive or EndpointInactive.
	Status *string `json:"status,omitempty"`
}

// Delivery statuses.
const (
	DeliveryPending    = "PENDING"
	DeliveryProcessing = "PROCESSING"
	DeliveryDelivered  = "DELIVERED"
	DeliveryFailed     = "FAILED"
	DeliveryCancelled  = "CANCELLED"
)

// Delivery is one event's delivery to one receiver, with its attempts.
type Delivery struct {
	// ID is "wd_" and the raw id.
	ID string `json:"id"`
	// EndpointID is nil for a payment's own webhookUrl.
	EndpointID     *string    `json:"endpointId"`
	EventType      string     `json:"eventType"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	MaxAttempts    int        `json:"maxAttempts"`
	LastStatusCode *int       `json:"lastStatusCode"`
	LastError      *string    `json:"lastError"`
	NextRetryAt    *time.Time `json:"nextRetryAt"`
	DeliveredAt    *time.Time `json:"deliveredAt"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	// Payload is the event body exactly as sent; ParseEvent decodes it.
	Payload json.RawMessage `json:"payload"`
}

// DeliveryListParams filter the delivery list.
type DeliveryListParams struct {
	Status     string
	EventType  string
	EndpointID string
	// Limit is the page size, 1–100 (default 25); Offset where to start.
	Limit  int
	Offset int
}

// DeliveryList is one page of deliveries.
type DeliveryList struct {
	Data   []*Delivery `json:"data"`
	Total  int         `json:"total"`
	Limit  int         `json:"limit"`
	Offset int         `json:"offset"`
}

// DeliveryStats count deliveries by status.
type DeliveryStats struct {
	Total      int `json:"total"`
	Pending    int `json:"PENDING"`
	Processing int `json:"PROCESSING"`
	Delivered  int `json:"DELIVERED"`
	Failed     int `json:"FAILED"`
	Cancelled  int `json:"CANCELLED"`
}

// EventDefinition is an entry of the event catalog.
type EventDefinition struct {
	Event       string `json:"event"`
	Description string `json:"description"`
	Legacy      bool   `json:"legacy,omitempty"`
}

// WebhooksService is /v1/webhooks.
type WebhooksService struct{ c *Client }

// CreateEndpoint registers an endpoint; the answer carries its secret,
// shown only this once.
func (s *WebhooksService) CreateEndpoint(ctx context.Context, p EndpointParams) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	if _, err := s.c.do(ctx, keyedWrite(request{method: http.MethodPost, path: "/webhooks/endpoints", body: p}, p.IdempotencyKey), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListEndpoints lists the endpoints of the key's account and mode, without
// secrets.
func (s *WebhooksService) ListEndpoints(ctx context.Context) ([]*WebhookEndpoint, error) {
	var out struct {
		Data []*WebhookEndpoint `json:"data"`
	}
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/webhooks/endpoints"}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// UpdateEndpoint changes an endpoint's URL, events or status.
func (s *WebhooksService) UpdateEndpoint(ctx context.Context, id string, p EndpointUpdate) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	if _, err := s.c.do(ctx, request{method: http.MethodPatch, path: "/webhooks/endpoints/" + pathID(id), body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteEndpoint deletes an endpoint; its pending deliveries are
// cancelled.
func (s *WebhooksService) DeleteEndpoint(ctx context.Context, id string) error {
	resp, err := s.c.do(ctx, request{method: http.MethodDelete, path: "/webhooks/endpoints/" + pathID(id)}, nil)
	if err != nil && resp != nil && resp.Attempts > 1 && errors.Is(err, ErrNotFound) {
		// An earlier attempt deleted it and its answer was lost.
		return nil
	}
	return err
}

// RotateSecret replaces an endpoint's secret at once and returns the new
// one. Deliveries signed from now on use it: verify with both secrets
// (ParseWebhook) until your receivers all know the new one.
func (s *WebhooksService) RotateSecret(ctx context.Context, id string) (string, error) {
	var out struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	r := request{method: http.MethodPost, path: "/webhooks/endpoints/" + pathID(id) + "/rotate-secret",
		body: map[string]string{"id": id}, class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return "", err
	}
	return out.Secret, nil
}

// RotateTransactionSecret replaces the secret that signs deliveries to
// payments' own webhookUrl (this key's mode) and returns it.
func (s *WebhooksService) RotateTransactionSecret(ctx context.Context) (string, error) {
	var out struct {
		Secret string `json:"transactionWebhookSecret"`
	}
	r := request{method: http.MethodPost, path: "/webhooks/transaction-secret/rotate", class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return "", err
	}
	return out.Secret, nil
}

func (p DeliveryListParams) query() url.Values {
	q := url.Values{}
	if p.Status != "" {
		q.Set("status", p.Status)
	}
	if p.EventType != "" {
		q.Set("eventType", p.EventType)
	}
	if p.EndpointID != "" {
		q.Set("endpointId", p.EndpointID)
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q
}

// ListDeliveriesPage reads one page of deliveries, newest first.
func (s *WebhooksService) ListDeliveriesPage(ctx context.Context, p DeliveryListParams) (*DeliveryList, error) {
	var out DeliveryList
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/webhooks/deliveries", query: p.query()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListDeliveries iterates over every delivery matching p, page after page
// by offset, each once (as Payments.List).
func (s *WebhooksService) ListDeliveries(ctx context.Context, p DeliveryListParams) iter.Seq2[*Delivery, error] {
	return unique(paginate(p, func(p DeliveryListParams) ([]*Delivery, DeliveryListParams, bool, error) {
		page, err := s.ListDeliveriesPage(ctx, p)
		if err != nil {
			return nil, p, false, err
		}
		p.Offset = page.Offset + len(page.Data)
		return page.Data, p, p.Offset < page.Total, nil
	}), func(d *Delivery) string { return d.ID })
}

// DeliveryStats counts the deliveries of the key's account and mode.
func (s *WebhooksService) DeliveryStats(ctx context.Context) (*DeliveryStats, error) {
	var out DeliveryStats
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/webhooks/stats"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EventCatalog lists every event an endpoint may subscribe to (no
// authentication needed).
func (s *WebhooksService) EventCatalog(ctx context.Context) ([]EventDefinition, error) {
	var out []EventDefinition
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/webhooks/event-catalog", noAuth: true}, &out); err != nil {
		return nil, err
	}
	return out, nil
}
