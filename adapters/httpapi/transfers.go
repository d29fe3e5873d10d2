package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TransfersController serves /v1/transfers: money between a platform and
// its sub-accounts (docs/marketplaces.md, "Transfers").
type TransfersController struct {
	transfers *app.TransferService
}

// Routes registers the transfer routes. The create keeps its
// Idempotency-Key itself (a money write, exactly once per key).
func (c *TransfersController) Routes(r *mux.Router) {
	r.Handle("/transfers", ownsKey(handle(c.create))).Methods(http.MethodPost).Name("transfers.create")
	r.HandleFunc("/transfers", handle(c.list)).Methods(http.MethodGet).Name("transfers.list")
	r.HandleFunc("/transfers/{id}", handle(c.get)).Methods(http.MethodGet).Name("transfers.get")
}

type createTransferRequest struct {
	Amount      *int64         `json:"amount"`
	Currency    string         `json:"currency"`
	Destination *string        `json:"destination"`
	Description string         `json:"description"`
	Metadata    metadataObject `json:"metadata"`
}

func (c *TransfersController) create(w http.ResponseWriter, r *http.Request) (any, error) {
	key, err := checkIdempotencyKey("Idempotency-Key", r.Header.Get("Idempotency-Key"))
	if err != nil {
		return nil, err
	}
	var req createTransferRequest
	body, err := readJSON(w, r, true, &req)
	if err != nil {
		return nil, err
	}
	if req.Amount == nil {
		return nil, badRequest("amount", "parameter_missing", "amount is required (minor units)")
	}
	if req.Destination == nil || *req.Destination == "" {
		return nil, badRequest("destination", "parameter_missing", "destination is required: the account to credit (acct_...)")
	}
	if _, ok := domain.ParseAccountID(*req.Destination); !ok {
		return nil, badRequest("destination", "parameter_invalid", "destination must be an account id (acct_...)")
	}
	cur, err := domain.ParseCurrency(req.Currency)
	if err != nil {
		return nil, err
	}
	in := app.CreateTransferInput{Amount: *req.Amount, Currency: cur, DestinationID: *req.Destination,
		Description: req.Description, Metadata: req.Metadata.values()}
	idem := app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}
	return c.transfers.Create(r.Context(), callerFrom(r.Context()), in, idem, func(t *domain.Transfer) (app.Response, error) {
		return created(t.Public())
	})
}

func (c *TransfersController) get(_ http.ResponseWriter, r *http.Request) (any, error) {
	raw, ok := domain.ParseTransferID(mux.Vars(r)["id"])
	if !ok {
		return nil, ports.ErrNotFound
	}
	t, err := c.transfers.Get(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		return nil, err
	}
	return t.Public(), nil
}

type transferListResponse struct {
	Object     string                  `json:"object"`
	Data       []domain.PublicTransfer `json:"data"`
	HasMore    bool                    `json:"has_more"`
	NextCursor *string                 `json:"next_cursor"`
}

// list serves the transfers the caller sent or received, newest first,
// with a cursor (starting_after).
func (c *TransfersController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	v := r.URL.Query()
	for _, p := range []string{"page", "offset"} {
		if v.Has(p) {
			return nil, badRequest(p, "parameter_unsupported", p+" is not supported: use limit and starting_after (a cursor)")
		}
	}
	q := ports.TransferQuery{Scope: callerFrom(r.Context()).Scope()}
	var err error
	if q.Limit, err = intParam(v.Get("limit"), "limit", 1, 100, 25); err != nil {
		return nil, err
	}
	if s := v.Get("starting_after"); s != "" {
		raw, ok := domain.ParseTransferID(s)
		if !ok {
			return nil, badRequest("starting_after", "parameter_invalid", "starting_after must be a transfer id (tr_...)")
		}
		q.StartingAfter = raw
	}
	ts, more, err := c.transfers.List(r.Context(), q)
	if err != nil {
		if q.StartingAfter != "" && isNotFound(err) {
			err = badRequest("starting_after", "parameter_invalid", "starting_after is not a transfer of this account")
		}
		return nil, err
	}
	out := transferListResponse{Object: "list", Data: make([]domain.PublicTransfer, 0, len(ts)), HasMore: more}
	for _, t := range ts {
		out.Data = append(out.Data, t.Public())
	}
	if more && len(ts) > 0 {
		next := domain.PrefixTransfer + ts[len(ts)-1].ID()
		out.NextCursor = &next
	}
	return out, nil
}
