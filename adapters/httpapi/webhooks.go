package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// WebhooksController serves /v1/webhooks: endpoints, deliveries, stats and
// the transaction-webhook secret. The event catalog is public and is
// registered apart (CatalogRoutes), outside the apikey-protected router.
type WebhooksController struct {
	webhooks *app.WebhookService
}

// CatalogRoutes registers GET /v1/webhooks/event-catalog, which needs no
// authentication, on the root router.
func (c *WebhooksController) CatalogRoutes(r *mux.Router) {
	r.HandleFunc("/v1/webhooks/event-catalog", handle(c.catalog)).Methods(http.MethodGet).Name("webhooks.event_catalog")
}

// Routes registers the authenticated webhook routes on the /v1 router.
func (c *WebhooksController) Routes(r *mux.Router) {
	r.HandleFunc("/webhooks/endpoints", handle(c.create)).Methods(http.MethodPost).Name("webhooks.endpoints.create")
	r.HandleFunc("/webhooks/endpoints", handle(c.list)).Methods(http.MethodGet).Name("webhooks.endpoints.list")
	r.HandleFunc("/webhooks/endpoints/{id}", handle(c.update)).Methods(http.MethodPatch).Name("webhooks.endpoints.update")
	r.HandleFunc("/webhooks/endpoints/{id}", handle(c.delete)).Methods(http.MethodDelete).Name("webhooks.endpoints.delete")
	r.HandleFunc("/webhooks/endpoints/{id}/rotate-secret", handle(c.rotate)).Methods(http.MethodPost).Name("webhooks.endpoints.rotate_secret")
	r.HandleFunc("/webhooks/deliveries", handle(c.deliveries)).Methods(http.MethodGet).Name("webhooks.deliveries.list")
	r.HandleFunc("/webhooks/stats", handle(c.stats)).Methods(http.MethodGet).Name("webhooks.stats")
	r.HandleFunc("/webhooks/transaction-secret/rotate", handle(c.rotateTransaction)).Methods(http.MethodPost).Name("webhooks.transaction_secret.rotate")
}

func (c *WebhooksController) catalog(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return domain.EventCatalog, nil
}

// endpointJSON is an endpoint as listed: never its secret.
type endpointJSON struct {
	ID        string             `json:"id"`
	URL       string             `json:"url"`
	Events    []domain.EventType `json:"events"`
	Status    string             `json:"status"`
	CreatedAt domain.Timestamp   `json:"createdAt"`
	UpdatedAt domain.Timestamp   `json:"updatedAt"`
}

func toEndpointJSON(e domain.WebhookEndpoint) endpointJSON {
	return endpointJSON{ID: e.ID, URL: e.URL, Events: e.Events, Status: string(e.Status),
		CreatedAt: domain.Timestamp(e.CreatedAt), UpdatedAt: domain.Timestamp(e.UpdatedAt)}
}

type createEndpointRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

func (c *WebhooksController) create(w http.ResponseWriter, r *http.Request) (any, error) {
	var req createEndpointRequest
	if _, err := readJSON(w, r, false, &req); err != nil {
		return nil, err
	}
	e, err := c.webhooks.CreateEndpoint(r.Context(), callerFrom(r.Context()), app.EndpointInput{URL: req.URL, Events: req.Events})
	if err != nil {
		return nil, err
	}
	return created(struct {
		endpointJSON
		Secret string `json:"secret"`
	}{toEndpointJSON(e), e.Secret})
}

func (c *WebhooksController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	eps, err := c.webhooks.ListEndpoints(r.Context(), callerFrom(r.Context()))
	if err != nil {
		return nil, err
	}
	out := make([]endpointJSON, len(eps))
	for i, e := range eps {
		out[i] = toEndpointJSON(e)
	}
	return map[string]any{"data": out}, nil
}

type updateEndpointRequest struct {
	URL    *string   `json:"url"`
	Events *[]string `json:"events"`
	Status *string   `json:"status"`
}

func (c *WebhooksController) update(w http.ResponseWriter, r *http.Request) (any, error) {
	var req updateEndpointRequest
	if _, err := readJSON(w, r, false, &req); err != nil {
		return nil, err
	}
	e, err := c.webhooks.UpdateEndpoint(r.Context(), callerFrom(r.Context()), mux.Vars(r)["id"],
		app.EndpointUpdate{URL: req.URL, Events: req.Events, Status: req.Status})
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": e.ID, "url": e.URL, "events": e.Events, "status": e.Status}, nil
}

func (c *WebhooksController) delete(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := c.webhooks.DeleteEndpoint(r.Context(), callerFrom(r.Context()), mux.Vars(r)["id"]); err != nil {
		return nil, err
	}
	return map[string]bool{"deleted": true}, nil
}

func (c *WebhooksController) rotate(w http.ResponseWriter, r *http.Request) (any, error) {
	id := mux.Vars(r)["id"]
	body, err := readBody(w, r, false)
	if err != nil {
		return nil, err
	}
	// The spec's body is {id}; it is optional and must name the path's
	// endpoint when sent.
	if len(body) > 0 {
		var req struct {
			ID string `json:"id"`
		}
		if err := decodeStrict(body, &req); err != nil {
			return nil, err
		}
		if req.ID != "" && req.ID != id {
			return nil, badRequest("id", "parameter_invalid", "id must match the endpoint in the path")
		}
	}
	secret, err := c.webhooks.RotateEndpointSecret(r.Context(), callerFrom(r.Context()), id)
	if err != nil {
		return nil, err
	}
	return map[string]string{"id": id, "secret": secret}, nil
}

func (c *WebhooksController) rotateTransaction(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	secret, err := c.webhooks.RotateTransactionSecret(r.Context(), callerFrom(r.Context()))
	if err != nil {
		return nil, err
	}
	return map[string]string{"transactionWebhookSecret": secret}, nil
}

// deliveryJSON is a delivery record with the payload as sent, documents
// masked as in every list.
type deliveryJSON struct {
	ID             string            `json:"id"`
	EndpointID     *string           `json:"endpointId"`
	EventType      domain.EventType  `json:"eventType"`
	Status         string            `json:"status"`
	Attempts       int               `json:"attempts"`
	MaxAttempts    int               `json:"maxAttempts"`
	LastStatusCode *int              `json:"lastStatusCode"`
	LastError      *string           `json:"lastError"`
	NextRetryAt    *domain.Timestamp `json:"nextRetryAt"`
	DeliveredAt    *domain.Timestamp `json:"deliveredAt"`
	CreatedAt      domain.Timestamp  `json:"createdAt"`
	UpdatedAt      domain.Timestamp  `json:"updatedAt"`
	Payload        json.RawMessage   `json:"payload"`
}

func toDeliveryJSON(d domain.WebhookDelivery) deliveryJSON {
	out := deliveryJSON{
		ID: d.ID, EventType: d.EventType, Status: string(d.Status), Attempts: d.Attempts, MaxAttempts: d.MaxAttempts,
		LastStatusCode: d.LastStatusCode, LastError: d.LastError,
		CreatedAt: domain.Timestamp(d.CreatedAt), UpdatedAt: domain.Timestamp(d.UpdatedAt),
		Payload: json.RawMessage(domain.MaskDocumentsInJSON(d.Payload)),
	}
	if d.EndpointID != "" {
		id := d.EndpointID
		out.EndpointID = &id
	}
	if d.NextRetryAt != nil && d.Status == domain.DeliveryPending {
		t := domain.Timestamp(*d.NextRetryAt)
		out.NextRetryAt = &t
	}
	if d.DeliveredAt != nil {
		t := domain.Timestamp(*d.DeliveredAt)
		out.DeliveredAt = &t
	}
	if !json.Valid(out.Payload) {
		out.Payload = json.RawMessage("null")
	}
	return out
}

func parseDeliveryQuery(r *http.Request, scope ports.Scope) (ports.DeliveryQuery, error) {
	v := r.URL.Query()
	q := ports.DeliveryQuery{Scope: scope, Limit: 25}
	var err error
	if q.Limit, err = intParam(v.Get("limit"), "limit", 1, 100, 25); err != nil {
		return q, err
	}
	if s := v.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, badRequest("offset", "parameter_invalid", "offset must be a non-negative integer")
		}
		q.Offset = n
	}
	if s := v.Get("status"); s != "" {
		st := domain.DeliveryStatus(s)
		if !st.Valid() {
			return q, badRequest("status", "parameter_invalid", "status must be one of PENDING, PROCESSING, DELIVERED, FAILED, CANCELLED")
		}
		q.Status = st
	}
	if s := v.Get("eventType"); s != "" {
		t := domain.EventType(s)
		if !domain.KnownEvent(t) {
			return q, badRequest("eventType", "parameter_invalid", "eventType must be an event of the catalog")
		}
		q.EventType = t
	}
	q.EndpointID = v.Get("endpointId")
	return q, nil
}

func (c *WebhooksController) deliveries(_ http.ResponseWriter, r *http.Request) (any, error) {
	caller := callerFrom(r.Context())
	q, err := parseDeliveryQuery(r, caller.Scope())
	if err != nil {
		return nil, err
	}
	ds, total, err := c.webhooks.ListDeliveries(r.Context(), q)
	if err != nil {
		return nil, err
	}
	data := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		data[i] = toDeliveryJSON(d)
	}
	return map[string]any{"data": data, "total": total, "limit": q.Limit, "offset": q.Offset}, nil
}

func (c *WebhooksController) stats(_ http.ResponseWriter, r *http.Request) (any, error) {
	st, err := c.webhooks.DeliveryStats(r.Context(), callerFrom(r.Context()))
	if err != nil {
		return nil, err
	}
	out := map[string]int{"total": 0}
	for _, s := range domain.DeliveryStatuses {
		out[string(s)] = st[s]
		out["total"] += st[s]
	}
	return out, nil
}
