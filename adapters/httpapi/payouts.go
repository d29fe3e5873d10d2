package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// PayoutsController serves /v1/payouts and the payout test helpers.
type PayoutsController struct {
	payouts *app.PayoutService
	// receipts draws paid payouts' receipts; nil serves no receipt route.
	receipts *app.ReceiptService
}

// Routes registers the payout routes.
func (c *PayoutsController) Routes(r *mux.Router) {
	r.Handle("/payouts", ownsKey(handle(c.create))).Methods(http.MethodPost).Name("payouts.create")
	r.HandleFunc("/payouts", handle(c.list)).Methods(http.MethodGet).Name("payouts.list")
	r.HandleFunc("/payouts/{id}", onPayout(c.get)).Methods(http.MethodGet).Name("payouts.get")
	r.HandleFunc("/payouts/{id}/cancel", onPayout(c.cancel)).Methods(http.MethodPost).Name("payouts.cancel")
	if c.receipts != nil {
		r.HandleFunc("/payouts/{id}/receipt", onPayout(c.receipt)).Methods(http.MethodGet).Name("payouts.receipt")
	}
	r.HandleFunc("/test_helpers/payouts/{id}/pay", onPayout(c.pay)).Methods(http.MethodPost).Name("test_helpers.payouts.pay")
	r.HandleFunc("/test_helpers/payouts/{id}/fail", onPayout(c.fail)).Methods(http.MethodPost).Name("test_helpers.payouts.fail")
}

// onPayout resolves {id} (po_ or raw; anything else is 404 before h runs)
// and the caller, then answers as handle does.
func onPayout(h chargeFunc) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) (any, error) {
		raw, ok := domain.ParsePayoutID(mux.Vars(r)["id"])
		if !ok {
			return nil, ports.ErrNotFound
		}
		return h(w, r, callerFrom(r.Context()), raw)
	})
}

type destinationJSON struct {
	PixKey *string `json:"pix_key"`
	Type   string  `json:"type"`
}

type createPayoutRequest struct {
	Amount      *int64           `json:"amount"`
	Currency    string           `json:"currency"`
	Destination *destinationJSON `json:"destination"`
	Description string           `json:"description"`
	Metadata    metadataObject   `json:"metadata"`
}

func (c *PayoutsController) create(w http.ResponseWriter, r *http.Request) (any, error) {
	key, err := checkIdempotencyKey("Idempotency-Key", r.Header.Get("Idempotency-Key"))
	if err != nil {
		return nil, err
	}
	var req createPayoutRequest
	body, err := readJSON(w, r, true, &req)
	if err != nil {
		return nil, err
	}
	if req.Amount == nil {
		return nil, badRequest("amount", "parameter_missing", "amount is required (centavos)")
	}
	if req.Currency != "" && req.Currency != string(domain.CurrencyBRL) {
		return nil, badRequest("currency", "parameter_invalid", "payouts are in BRL only")
	}
	caller := callerFrom(r.Context())
	in := app.CreatePayoutInput{Amount: *req.Amount, Description: req.Description, Metadata: req.Metadata.values()}
	switch {
	case req.Destination == nil && caller.Account.IsSubaccount():
		// A sub-account's payout goes to its payout_pix_key
		// (app.PayoutService.destination).
	case req.Destination == nil || req.Destination.PixKey == nil || *req.Destination.PixKey == "":
		return nil, badRequest("destination.pix_key", "parameter_missing", "destination.pix_key is required")
	default:
		in.PixKey, in.KeyType = *req.Destination.PixKey, domain.PixKeyType(req.Destination.Type)
	}
	idem := app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}
	return c.payouts.Create(r.Context(), caller, in, idem, func(p *domain.Payout) (app.Response, error) {
		return created(p.Public())
	})
}

func (c *PayoutsController) get(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	p, err := c.payouts.Get(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return p.Public(), nil
}

func (c *PayoutsController) cancel(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	p, err := c.payouts.Cancel(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return p.Public(), nil
}

func (c *PayoutsController) pay(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ports.ErrNotFound // before the body: live mode has no such route
	}
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	p, err := c.payouts.PayTestPayout(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return p.Public(), nil
}

type failPayoutRequest struct {
	FailureCode string `json:"failure_code"`
}

func (c *PayoutsController) fail(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ports.ErrNotFound // before the body: live mode has no such route
	}
	var req failPayoutRequest
	if err := optionalBody(w, r, &req); err != nil {
		return nil, err
	}
	if req.FailureCode == "" {
		req.FailureCode = "rejected_by_psp"
	}
	p, err := c.payouts.FailTestPayout(r.Context(), caller, raw, req.FailureCode)
	if err != nil {
		return nil, err
	}
	return p.Public(), nil
}

type payoutListResponse struct {
	Object     string                `json:"object"`
	Data       []domain.PublicPayout `json:"data"`
	HasMore    bool                  `json:"has_more"`
	NextCursor *string               `json:"next_cursor"`
}

// list serves the payout list with a cursor (starting_after) and a status
// filter.
func (c *PayoutsController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	caller := callerFrom(r.Context())
	v := r.URL.Query()
	q := ports.PayoutQuery{Scope: caller.Scope()}
	for _, p := range []string{"page", "offset"} {
		if v.Has(p) {
			return nil, badRequest(p, "parameter_unsupported", p+" is not supported: use limit and starting_after (a cursor)")
		}
	}
	var err error
	if q.Limit, err = intParam(v.Get("limit"), "limit", 1, 100, 25); err != nil {
		return nil, err
	}
	if s := v.Get("starting_after"); s != "" {
		raw, ok := domain.ParsePayoutID(s)
		if !ok {
			return nil, badRequest("starting_after", "parameter_invalid", "starting_after must be a payout id (po_...)")
		}
		q.StartingAfter = raw
	}
	if s := v.Get("status"); s != "" {
		st := domain.PayoutStatus(s)
		if !st.Valid() {
			return nil, badRequest("status", "parameter_invalid", "status must be one of pending, processing, paid, failed, cancelled")
		}
		q.Statuses = []domain.PayoutStatus{st}
	}
	ps, more, err := c.payouts.List(r.Context(), q)
	if err != nil {
		if q.StartingAfter != "" && isNotFound(err) {
			err = badRequest("starting_after", "parameter_invalid", "starting_after is not a payout of this account")
		}
		return nil, err
	}
	out := payoutListResponse{Object: "list", Data: make([]domain.PublicPayout, 0, len(ps)), HasMore: more}
	for _, p := range ps {
		out.Data = append(out.Data, p.Public())
	}
	if more && len(ps) > 0 {
		next := domain.PrefixPayout + ps[len(ps)-1].ID()
		out.NextCursor = &next
	}
	return out, nil
}

// receipt draws a paid payout's receipt (comprovante de transferência).
func (c *PayoutsController) receipt(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	loc, err := domain.ParseLocale(r.URL.Query().Get("lang"))
	if err != nil {
		return nil, err
	}
	doc, err := c.receipts.PayoutReceipt(r.Context(), caller, raw, loc)
	if err != nil {
		return nil, err
	}
	return receiptBody(doc), nil
}
