package httpapi

import (
	"encoding/base64"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// SubscriptionsController serves /v1/subscriptions (Pix Automático) and
// its test helpers.
type SubscriptionsController struct {
	subs  *app.SubscriptionService
	sim   ports.PaymentSimulator
	links domain.Links
	qr    QRRenderer
}

// Routes registers the subscription routes.
func (c *SubscriptionsController) Routes(r *mux.Router) {
	r.Handle("/subscriptions", ownsKey(handle(c.create))).Methods(http.MethodPost).Name("subscriptions.create")
	r.HandleFunc("/subscriptions", handle(c.list)).Methods(http.MethodGet).Name("subscriptions.list")
	r.HandleFunc("/subscriptions/{id}", onSubscription(c.get)).Methods(http.MethodGet).Name("subscriptions.get")
	r.HandleFunc("/subscriptions/{id}/cancel", onSubscription(c.cancel)).Methods(http.MethodPost).Name("subscriptions.cancel")
	r.HandleFunc("/subscriptions/{id}/charges", onSubscription(c.charges)).Methods(http.MethodGet).Name("subscriptions.charges")
	r.HandleFunc("/subscriptions/{id}/charges", onSubscription(c.setAmount)).Methods(http.MethodPost).Name("subscriptions.set_amount")
	for _, h := range []struct {
		name string
		fn   chargeFunc
	}{{"authorize", c.authorize}, {"reject", c.reject}, {"revoke", c.revoke}, {"advance", c.advance}} {
		r.HandleFunc("/test_helpers/subscriptions/{id}/"+h.name, onSubscription(h.fn)).Methods(http.MethodPost).
			Name("test_helpers.subscriptions." + h.name)
	}
}

// onSubscription resolves {id} (sub_ or raw; anything else is 404 before
// h runs) and the caller, then answers as handle does.
func onSubscription(h chargeFunc) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) (any, error) {
		raw, ok := domain.ParseSubscriptionID(mux.Vars(r)["id"])
		if !ok {
			return nil, ports.ErrNotFound
		}
		return h(w, r, callerFrom(r.Context()), raw)
	})
}

type subscriptionCustomerJSON struct {
	Name     string `json:"name"`
	Document string `json:"document"`
}

type variableAmountJSON struct {
	MaxAmount *int64 `json:"max_amount"`
}

type firstPaymentJSON struct {
	Amount *int64 `json:"amount"`
}

// payerAccountJSON is the payer's account at their bank.
type payerAccountJSON struct {
	ISPB   string `json:"ispb"`
	Branch string `json:"branch"`
	Number string `json:"number"`
}

type createSubscriptionRequest struct {
	Customer     *subscriptionCustomerJSON `json:"customer"`
	Amount       *int64                    `json:"amount"`
	Variable     *variableAmountJSON       `json:"variable"`
	Interval     string                    `json:"interval"`
	StartDate    *string                   `json:"start_date"`
	EndDate      *string                   `json:"end_date"`
	Contract     string                    `json:"contract"`
	Description  string                    `json:"description"`
	RetryPolicy  string                    `json:"retry_policy"`
	Journey      string                    `json:"journey"`
	FirstPayment *firstPaymentJSON         `json:"first_payment"`
	PayerAccount *payerAccountJSON         `json:"payer_account"`
}

// date reads an optional YYYY-MM-DD member.
func date(param string, s *string) (bizdays.Date, error) {
	if s == nil {
		return bizdays.Date{}, nil
	}
	d, err := bizdays.ParseDate(*s)
	if err != nil {
		return bizdays.Date{}, badRequest(param, "parameter_invalid", param+" must be a date written YYYY-MM-DD (Brasília)")
	}
	return d, nil
}

func (c *SubscriptionsController) create(w http.ResponseWriter, r *http.Request) (any, error) {
	key, err := checkIdempotencyKey("Idempotency-Key", r.Header.Get("Idempotency-Key"))
	if err != nil {
		return nil, err
	}
	var req createSubscriptionRequest
	body, err := readJSON(w, r, true, &req)
	if err != nil {
		return nil, err
	}
	in := app.CreateSubscriptionInput{Amount: req.Amount, Variable: req.Variable != nil, Interval: domain.Interval(req.Interval),
		Contract: req.Contract, Description: req.Description, RetryPolicy: domain.RetryPolicy(req.RetryPolicy),
		Journey: domain.Journey(req.Journey)}
	if req.Customer != nil {
		in.Customer = domain.Customer{Name: req.Customer.Name, Document: req.Customer.Document}
	}
	if req.Variable != nil {
		in.MaxAmount = req.Variable.MaxAmount
	}
	if req.FirstPayment != nil {
		if req.FirstPayment.Amount == nil {
			return nil, badRequest("first_payment.amount", "parameter_missing", "first_payment.amount is required (centavos)")
		}
		in.FirstPayment = req.FirstPayment.Amount
	}
	if pa := req.PayerAccount; pa != nil {
		in.PayerAccount = &domain.PayerAccount{ISPB: pa.ISPB, Branch: pa.Branch, Number: pa.Number}
	}
	if req.StartDate != nil && *req.StartDate == "" {
		return nil, badRequest("start_date", "parameter_invalid", "start_date must be a date written YYYY-MM-DD (Brasília)")
	}
	if in.StartDate, err = date("start_date", req.StartDate); err != nil {
		return nil, err
	}
	if in.EndDate, err = date("end_date", req.EndDate); err != nil {
		return nil, err
	}
	idem := app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}
	return c.subs.Create(r.Context(), callerFrom(r.Context()), in, idem, func(s *domain.Subscription) (app.Response, error) {
		return created(s.Public(c.links))
	})
}

// subscriptionWithQR is a subscription with its QR PNG inline
// (?include=qr_code_base64), as a charge's.
type subscriptionWithQR struct {
	domain.PublicSubscription
	Pix *subscriptionPixWithQR `json:"pix"`
}

type subscriptionPixWithQR struct {
	domain.PublicSubscriptionPix
	QRCodeBase64 string `json:"qr_code_base64,omitempty"`
}

func (c *SubscriptionsController) get(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	include := r.URL.Query().Get("include")
	if include != "" && include != "qr_code_base64" {
		return nil, badRequest("include", "parameter_invalid", "include must be qr_code_base64")
	}
	s, err := c.subs.Get(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	pub := s.Public(c.links)
	if include == "qr_code_base64" && pub.Pix != nil {
		png, err := c.qr.PNG(pub.Pix.BRCode)
		if err != nil {
			return nil, err
		}
		return subscriptionWithQR{PublicSubscription: pub,
			Pix: &subscriptionPixWithQR{PublicSubscriptionPix: *pub.Pix, QRCodeBase64: base64.StdEncoding.EncodeToString(png)}}, nil
	}
	return pub, nil
}

func (c *SubscriptionsController) cancel(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	s, err := c.subs.Cancel(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return s.Public(c.links), nil
}

type setAmountRequest struct {
	Amount *int64 `json:"amount"`
}

// setAmount sets a variable subscription's next cycle amount.
func (c *SubscriptionsController) setAmount(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	var req setAmountRequest
	if _, err := readJSON(w, r, false, &req); err != nil {
		return nil, err
	}
	if req.Amount == nil {
		return nil, badRequest("amount", "parameter_missing", "amount is required (centavos)")
	}
	s, err := c.subs.SetNextAmount(r.Context(), caller, raw, *req.Amount)
	if err != nil {
		return nil, err
	}
	return s.Public(c.links), nil
}

type subscriptionListResponse struct {
	Object     string                      `json:"object"`
	Data       []domain.PublicSubscription `json:"data"`
	HasMore    bool                        `json:"has_more"`
	NextCursor *string                     `json:"next_cursor"`
}

// list serves the subscription list with a cursor (starting_after) and a
// status filter, newest first.
func (c *SubscriptionsController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	caller := callerFrom(r.Context())
	v := r.URL.Query()
	q := ports.SubscriptionQuery{Scope: caller.Scope()}
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
		raw, ok := domain.ParseSubscriptionID(s)
		if !ok {
			return nil, badRequest("starting_after", "parameter_invalid", "starting_after must be a subscription id (sub_...)")
		}
		q.StartingAfter = raw
	}
	if s := v.Get("status"); s != "" {
		st := domain.SubscriptionStatus(s)
		if !st.Valid() {
			return nil, badRequest("status", "parameter_invalid",
				"status must be one of pending_authorization, active, rejected, expired, cancelled, completed")
		}
		q.Statuses = []domain.SubscriptionStatus{st}
	}
	subs, more, err := c.subs.List(r.Context(), q)
	if err != nil {
		if q.StartingAfter != "" && isNotFound(err) {
			err = badRequest("starting_after", "parameter_invalid", "starting_after is not a subscription of this account")
		}
		return nil, err
	}
	out := subscriptionListResponse{Object: "list", Data: make([]domain.PublicSubscription, 0, len(subs)), HasMore: more}
	for _, s := range subs {
		out.Data = append(out.Data, s.Public(c.links).Masked())
	}
	if more && len(subs) > 0 {
		next := domain.PrefixSubscription + subs[len(subs)-1].ID()
		out.NextCursor = &next
	}
	return out, nil
}

// charges lists each cycle's charge (and the first payment's), latest
// cycle first.
func (c *SubscriptionsController) charges(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	v := r.URL.Query()
	q := ports.SubscriptionChargeQuery{Scope: caller.Scope(), SubscriptionID: raw}
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
		id, ok := domain.ParseChargeID(s)
		if !ok {
			return nil, badRequest("starting_after", "parameter_invalid", "starting_after must be a charge id (ch_...)")
		}
		q.StartingAfter = id
	}
	cs, more, err := c.subs.Charges(r.Context(), q)
	if err != nil {
		if q.StartingAfter != "" && isNotFound(err) {
			if _, gerr := c.subs.Get(r.Context(), caller, raw); gerr == nil {
				err = badRequest("starting_after", "parameter_invalid", "starting_after is not a charge of this subscription")
			}
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

// testOnly refuses a live key before anything else: live mode has no test
// helper routes.
func testOnly(caller app.Caller) error {
	if caller.Mode != domain.ModeTest {
		return ports.ErrNotFound
	}
	return nil
}

func (c *SubscriptionsController) authorize(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := testOnly(caller); err != nil {
		return nil, err
	}
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	s, err := c.subs.AuthorizeTest(r.Context(), c.sim, caller, raw)
	if err != nil {
		return nil, err
	}
	return s.Public(c.links), nil
}

func (c *SubscriptionsController) reject(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := testOnly(caller); err != nil {
		return nil, err
	}
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	s, err := c.subs.RejectTest(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return s.Public(c.links), nil
}

func (c *SubscriptionsController) revoke(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := testOnly(caller); err != nil {
		return nil, err
	}
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	s, err := c.subs.RevokeTest(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return s.Public(c.links), nil
}

type advanceRequest struct {
	Fail bool `json:"fail"`
}

func (c *SubscriptionsController) advance(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := testOnly(caller); err != nil {
		return nil, err
	}
	var req advanceRequest
	if err := optionalBody(w, r, &req); err != nil {
		return nil, err
	}
	s, err := c.subs.AdvanceTest(r.Context(), c.sim, caller, raw, req.Fail)
	if err != nil {
		return nil, err
	}
	return s.Public(c.links), nil
}
