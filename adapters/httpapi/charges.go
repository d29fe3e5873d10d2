package httpapi

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ChargesController serves /v1/charges and /v1/pix/charges.
type ChargesController struct {
	charges *app.ChargeService
	links   domain.Links
	qr      QRRenderer
}

// Routes registers the charge routes.
func (c *ChargesController) Routes(r *mux.Router) {
	r.Handle("/charges", ownsKey(handle(c.create(false)))).Methods(http.MethodPost).Name("charges.create")
	r.Handle("/pix/charges", ownsKey(handle(c.create(true)))).Methods(http.MethodPost).Name("pix_charges.create")
	r.HandleFunc("/charges", handle(c.list)).Methods(http.MethodGet).Name("charges.list")
	r.HandleFunc("/charges/{id}", onCharge(c.get)).Methods(http.MethodGet).Name("charges.get")
	r.HandleFunc("/charges/{id}", onCharge(c.update)).Methods(http.MethodPost).Name("charges.update")
	r.HandleFunc("/charges/{id}/amount_due", onCharge(c.amountDue)).Methods(http.MethodGet).Name("charges.amount_due")
}

type customerJSON struct {
	Name     string `json:"name"`
	Document string `json:"document"`
	Email    string `json:"email"`
	Phone    string `json:"phone"`
}

type createChargeRequest struct {
	Amount             *int64         `json:"amount"`
	Currency           string         `json:"currency"`
	PaymentMethod      *string        `json:"payment_method"`
	Description        string         `json:"description"`
	ExpiresIn          *int64         `json:"expires_in"`
	Customer           *customerJSON  `json:"customer"`
	ExpectedPayerTaxID string         `json:"expected_payer_tax_id"`
	Metadata           metadataObject `json:"metadata"`
	DueDate            *string        `json:"due_date"`
	DaysAfterDue       *int           `json:"days_after_due"`
	Fine               *fineJSON      `json:"fine"`
	Interest           *interestJSON  `json:"interest"`
	Discount           *discountJSON  `json:"discount"`
	Abatement          *abatementJSON `json:"abatement"`
	Splits             []splitJSON    `json:"splits"`
	FeePayer           string         `json:"fee_payer"`
}

func (c *ChargesController) create(pixShortcut bool) answerFunc {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		key, err := checkIdempotencyKey("Idempotency-Key", r.Header.Get("Idempotency-Key"))
		if err != nil {
			return nil, err
		}
		var req createChargeRequest
		body, err := readJSON(w, r, true, &req)
		if err != nil {
			return nil, err
		}
		in, err := req.input(pixShortcut)
		if err != nil {
			return nil, err
		}
		idem := app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}
		return c.charges.Create(r.Context(), callerFrom(r.Context()), in, idem, app.AnswerPublic)
	}
}

// input is the create's request as app takes it; pixShortcut supplies
// payment_method.
func (req *createChargeRequest) input(pixShortcut bool) (app.CreateChargeInput, error) {
	if req.Amount == nil {
		return app.CreateChargeInput{}, badRequest("amount", "parameter_missing", "amount is required")
	}
	switch {
	case req.PaymentMethod == nil && !pixShortcut:
		return app.CreateChargeInput{}, badRequest("payment_method", "parameter_missing", "payment_method is required; the only accepted value is pix")
	case req.PaymentMethod != nil && *req.PaymentMethod != "pix":
		return app.CreateChargeInput{}, badRequest("payment_method", "parameter_invalid", "payment_method must be pix")
	}
	var cust domain.Customer
	if req.Customer != nil {
		cust = domain.Customer{Name: req.Customer.Name, Document: req.Customer.Document, Email: req.Customer.Email, Phone: req.Customer.Phone}
	}
	due, err := req.dueTerms()
	if err != nil {
		return app.CreateChargeInput{}, err
	}
	splits, err := splitsInput(req.Splits)
	if err != nil {
		return app.CreateChargeInput{}, err
	}
	return app.CreateChargeInput{
		Amount: *req.Amount, Currency: req.Currency, Methods: []domain.Method{domain.MethodPix},
		Description: req.Description, ExpiresIn: req.ExpiresIn, Customer: cust, StrictDocument: true,
		ExpectedPayer: req.ExpectedPayerTaxID, Metadata: req.Metadata.values(), Due: due,
		Splits: splits, FeePayer: domain.FeePayer(req.FeePayer),
	}, nil
}

func (c *ChargesController) get(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	ch, err := c.charges.Get(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	pub := ch.Public(c.links)
	include := r.URL.Query().Get("include")
	if include != "" && include != "qr_code_base64" {
		// A misspelt include must not silently answer without the image.
		return nil, badRequest("include", "parameter_invalid", "include must be qr_code_base64")
	}
	if include == "qr_code_base64" && pub.Pix != nil {
		png, err := c.qr.PNG(pub.Pix.BRCode)
		if err != nil {
			return nil, err
		}
		return chargeWithQR{PublicCharge: pub,
			Pix: &pixWithQR{PublicPix: *pub.Pix, QRCodeBase64: base64.StdEncoding.EncodeToString(png)}}, nil
	}
	return pub, nil
}

// chargeWithQR is a charge with its QR PNG inline (?include=qr_code_base64).
// The image is a convenience of this API, so the domain's public shape does
// not carry it.
type chargeWithQR struct {
	domain.PublicCharge
	Pix *pixWithQR `json:"pix,omitempty"`
}

type pixWithQR struct {
	domain.PublicPix
	QRCodeBase64 string `json:"qr_code_base64,omitempty"`
}

type listResponse struct {
	Object     string                `json:"object"`
	Data       []domain.PublicCharge `json:"data"`
	HasMore    bool                  `json:"has_more"`
	NextCursor *string               `json:"next_cursor"`
}

// list serves the charge list with a cursor (starting_after), never pages
// or offsets.
func (c *ChargesController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	caller := callerFrom(r.Context())
	q, err := parseChargeQuery(r, caller.Scope())
	if err != nil {
		return nil, err
	}
	cs, more, err := c.charges.List(r.Context(), q)
	if err != nil {
		if q.StartingAfter != "" && isNotFound(err) {
			err = badRequest("starting_after", "parameter_invalid", "starting_after is not a charge of this account")
		}
		return nil, err
	}
	out := listResponse{Object: "list", Data: make([]domain.PublicCharge, 0, len(cs)), HasMore: more}
	for _, ch := range cs {
		out.Data = append(out.Data, ch.Public(c.links).Masked())
	}
	if more && len(cs) > 0 {
		next := domain.PrefixCharge + cs[len(cs)-1].ID()
		out.NextCursor = &next
	}
	return out, nil
}

func parseChargeQuery(r *http.Request, scope ports.Scope) (ports.ChargeQuery, error) {
	v := r.URL.Query()
	q := ports.ChargeQuery{Scope: scope}
	p, err := parseListParams(v, "a charge id (ch_...)", func(s string) bool { _, ok := domain.ParseChargeID(s); return ok })
	if err != nil {
		return q, err
	}
	q.Limit, q.CreatedAfter, q.CreatedBefore = p.Limit, p.CreatedAfter, p.CreatedBefore
	q.StartingAfter, _ = domain.ParseChargeID(p.StartingAfter)
	if s := v.Get("status"); s != "" {
		st := domain.Status(s)
		if !st.Valid() {
			return q, badRequest("status", "parameter_invalid", "status must be one of pending, processing, paid, failed, expired, cancelled, refunded, disputed")
		}
		q.Statuses = st.TxStatuses()
	}
	if s := v.Get("customer_id"); s != "" {
		// The store normalises it; one that normalises to nothing matches
		// no charge (it must not drop the filter).
		q.CustomerDocument = s
	}
	return q, nil
}

// listParams are the parameters every cursor list shares.
type listParams struct {
	Limit int
	// StartingAfter is the cursor as sent ("" when absent).
	StartingAfter string
	// CreatedAfter and CreatedBefore are inclusive bounds.
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
}

// parseListParams reads limit (1–100, default 25), starting_after (which
// validCursor checks; cursorDesc names its form) and the created_after and
// created_before bounds, and refuses page and offset.
func parseListParams(v url.Values, cursorDesc string, validCursor func(string) bool) (listParams, error) {
	p := listParams{}
	for _, name := range []string{"page", "offset"} {
		if v.Has(name) {
			return p, badRequest(name, "parameter_unsupported", name+" is not supported: use limit and starting_after (a cursor)")
		}
	}
	var err error
	if p.Limit, err = intParam(v.Get("limit"), "limit", 1, 100, 25); err != nil {
		return p, err
	}
	if s := v.Get("starting_after"); s != "" {
		if !validCursor(s) {
			return p, badRequest("starting_after", "parameter_invalid", "starting_after must be "+cursorDesc)
		}
		p.StartingAfter = s
	}
	for _, b := range []struct {
		param string
		dst   **time.Time
	}{{"created_after", &p.CreatedAfter}, {"created_before", &p.CreatedBefore}} {
		if s := v.Get(b.param); s != "" {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return p, badRequest(b.param, "parameter_invalid", b.param+" must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z")
			}
			t = inclusiveBound(t, b.param == "created_before")
			if err := storableInstant(b.param, t); err != nil {
				return p, err
			}
			*b.dst = &t
		}
	}
	return p, nil
}

// inclusiveBound makes a timestamp bound inclusive of what the API shows:
// created_at is shown to the millisecond, so an upper bound takes the
// whole millisecond it names and a lower bound starts at one. A merchant
// who passes back a createdAt the API showed gets that item.
func inclusiveBound(t time.Time, upper bool) time.Time {
	if upper {
		t = t.Truncate(time.Millisecond).Add(time.Millisecond - time.Nanosecond)
	} else if ms := t.Truncate(time.Millisecond); ms.Before(t) {
		t = ms.Add(time.Millisecond)
	}
	return t.UTC()
}

// storableInstant refuses a bound outside the instants a store keeps
// (ports.MinTime–MaxTime), judged in UTC: "9999-12-31T23:59:59-03:00"
// parses, and is year 10000.
func storableInstant(param string, t time.Time) error {
	if ports.InTimeRange(t) {
		return nil
	}
	return badRequest(param, "parameter_invalid", param+" must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z once converted to UTC")
}
