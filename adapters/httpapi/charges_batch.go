package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// maxBatchBody bounds a batch create's body: a thousand due-date creates
// with every rule and some metadata, about 4 KiB each.
const maxBatchBody = 4 << 20

// ChargeBatchesController serves /v1/charges/batch. It is registered
// before ChargesController, whose /charges/{id} routes would otherwise
// take "batch" for a charge id.
type ChargeBatchesController struct {
	charges *app.ChargeService
	links   domain.Links
}

// Routes registers the batch routes.
func (c *ChargeBatchesController) Routes(r *mux.Router) {
	r.Handle("/charges/batch", ownsKey(handle(c.create))).Methods(http.MethodPost).Name("charges.batch_create")
	r.HandleFunc("/charges/batch/{id}", handle(c.get)).Methods(http.MethodGet).Name("charges.batch_get")
}

// createBatchRequest is the batch create's body: each charge is decoded
// on its own, as POST /v1/charges decodes its body.
type createBatchRequest struct {
	Charges *[]json.RawMessage `json:"charges"`
}

func (c *ChargeBatchesController) create(w http.ResponseWriter, r *http.Request) (any, error) {
	key, err := checkIdempotencyKey("Idempotency-Key", r.Header.Get("Idempotency-Key"))
	if err != nil {
		return nil, err
	}
	body, err := readBodyUpTo(w, r, true, maxBatchBody)
	if err != nil {
		return nil, err
	}
	var req createBatchRequest
	if err := decodeEnvelope(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Charges == nil:
		return nil, badRequest("charges", "parameter_missing", "charges is required: a list of 1 to 1000 charge creates")
	case len(*req.Charges) == 0, len(*req.Charges) > domain.MaxBatchCharges:
		return nil, badRequest("charges", "parameter_invalid", fmt.Sprintf("charges must hold 1 to %d charge creates, not %d",
			domain.MaxBatchCharges, len(*req.Charges)))
	}
	items := make([]app.BatchItem, len(*req.Charges))
	for i, raw := range *req.Charges {
		items[i].Input, items[i].Err = decodeBatchItem(raw)
	}
	idem := app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}
	return c.charges.CreateBatch(r.Context(), callerFrom(r.Context()), items, idem, func(b *app.ChargeBatch) (app.Response, error) {
		out, err := json.Marshal(c.render(b))
		if err != nil {
			return app.Response{}, err
		}
		return app.Response{StatusCode: http.StatusAccepted, Body: out}, nil
	})
}

// decodeEnvelope is decodeStrict for the batch's envelope, without its
// NUL check: the text of a charge is checked with the charge, so a NUL in
// one refuses that item rather than the batch.
func decodeEnvelope(body []byte, req *createBatchRequest) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "body_missing", "the request needs a JSON body")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		return jsonError(err, body, req)
	}
	if dec.More() {
		return badRequest("", "body_invalid", "the body must hold exactly one JSON object")
	}
	return nil
}

// decodeBatchItem decodes one charge of a batch as POST /v1/charges
// decodes its body (payment_method included), naming the offending
// parameter as it sits in the charge.
func decodeBatchItem(raw json.RawMessage) (app.CreateChargeInput, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return app.CreateChargeInput{}, badRequest("", "parameter_invalid", "each of charges must be a JSON object: a charge create")
	}
	var req createChargeRequest
	if err := decodeStrict(raw, &req); err != nil {
		return app.CreateChargeInput{}, err
	}
	return req.input(false)
}

func (c *ChargeBatchesController) get(_ http.ResponseWriter, r *http.Request) (any, error) {
	raw, ok := domain.ParseChargeBatchID(mux.Vars(r)["id"])
	if !ok {
		return nil, ports.ErrNotFound
	}
	b, err := c.charges.GetBatch(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		return nil, err
	}
	return c.render(b), nil
}

// chargeBatchJSON is a batch as the API shows it.
type chargeBatchJSON struct {
	ID          string              `json:"id"`
	Object      string              `json:"object"`
	Status      domain.BatchStatus  `json:"status"`
	Total       int                 `json:"total"`
	Created     int                 `json:"created"`
	Refused     int                 `json:"refused"`
	Pending     int                 `json:"pending"`
	CreatedAt   domain.Timestamp    `json:"created_at"`
	CompletedAt *domain.Timestamp   `json:"completed_at"`
	Items       []chargeBatchItemJS `json:"items"`
}

// chargeBatchItemJS is one item: its charge once created (masked as in
// every list), its error once refused.
type chargeBatchItemJS struct {
	Index  int                    `json:"index"`
	Status domain.BatchItemStatus `json:"status"`
	Charge *domain.PublicCharge   `json:"charge,omitempty"`
	Error  *errorDetail           `json:"error,omitempty"`
}

func (c *ChargeBatchesController) render(b *app.ChargeBatch) chargeBatchJSON {
	out := chargeBatchJSON{ID: domain.PrefixChargeBatch + b.ID, Object: "charge_batch", Status: b.Status, Total: b.Total,
		Created: b.Created, Refused: b.Refused, Pending: b.Pending, CreatedAt: domain.Timestamp(b.CreatedAt),
		Items: make([]chargeBatchItemJS, len(b.Items))}
	if !b.CompletedAt.IsZero() {
		t := domain.Timestamp(b.CompletedAt)
		out.CompletedAt = &t
	}
	for i, it := range b.Items {
		js := chargeBatchItemJS{Index: it.Index, Status: it.Status}
		if it.Charge != nil {
			pub := it.Charge.Public(c.links).Masked()
			js.Charge = &pub
		}
		if e := it.Error; e != nil {
			js.Error = &errorDetail{Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param}
		}
		out.Items[i] = js
	}
	return out
}

// DescribeChargeError renders a create's error as POST /v1/charges would
// answer it (app.DescribeError): quitad wires it as the charge service's
// ChargesConfig.BatchErrors, so a refused batch item shows the error its
// create alone would have had. ok is false for an error the API does not
// know (a 500).
func DescribeChargeError(err error) (ports.ChargeBatchError, bool) {
	ae := classify(chargesParams, err)
	if ae == nil {
		return ports.ChargeBatchError{}, false
	}
	return ports.ChargeBatchError{Status: ae.Status, Type: ae.Type, Code: ae.Code, Message: ae.Message, Param: ae.Param}, true
}
