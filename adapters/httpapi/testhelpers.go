package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// TestHelpersController serves /v1/test_helpers: test mode only; a live key
// gets 404 as if the routes did not exist.
type TestHelpersController struct {
	charges *app.ChargeService
	sim     ports.PaymentSimulator
	links   domain.Links
}

// Routes registers the test helper routes.
func (c *TestHelpersController) Routes(r *mux.Router) {
	r.HandleFunc("/test_helpers/charges/{id}/pay", handle(c.pay)).Methods(http.MethodPost).Name("test_helpers.charges.pay")
	r.HandleFunc("/test_helpers/charges/{id}/expire", handle(c.expire)).Methods(http.MethodPost).Name("test_helpers.charges.expire")
	r.HandleFunc("/test_helpers/charges/{id}/med_return", handle(c.medReturn)).Methods(http.MethodPost).Name("test_helpers.charges.med_return")
}

type payRequest struct {
	Amount        *int64 `json:"amount"`
	PayerDocument string `json:"payer_document"`
	PayerName     string `json:"payer_name"`
	Date          string `json:"date"`
}

// testCharge resolves the path id for a test helper, refusing live keys.
func testCharge(r *http.Request) (app.Caller, string, error) {
	caller := callerFrom(r.Context())
	raw, ok := domain.ParseChargeID(mux.Vars(r)["id"])
	if caller.Mode != domain.ModeTest || !ok {
		return caller, "", ports.ErrNotFound
	}
	return caller, raw, nil
}

func (c *TestHelpersController) pay(w http.ResponseWriter, r *http.Request) (any, error) {
	caller, raw, err := testCharge(r)
	if err != nil {
		return nil, err
	}
	body, err := readBody(w, r, false)
	if err != nil {
		return nil, err
	}
	var req payRequest
	if len(body) > 0 {
		if err := decodeStrict(body, &req); err != nil {
			return nil, err
		}
	}
	in := app.PayInput{Amount: req.Amount, PayerDocument: req.PayerDocument, PayerName: req.PayerName}
	if req.Date != "" {
		d, err := bizdays.ParseDate(req.Date)
		if err != nil {
			return nil, badRequest("date", "parameter_invalid", "date must be a date written YYYY-MM-DD")
		}
		in.Date = &d
	}
	res, err := c.charges.SimulatePayment(r.Context(), c.sim, caller, raw, in)
	if err != nil {
		return nil, err
	}
	return res.Charge.Public(c.links), nil
}

func (c *TestHelpersController) expire(w http.ResponseWriter, r *http.Request) (any, error) {
	caller, raw, err := testCharge(r)
	if err != nil {
		return nil, err
	}
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	ch, err := c.charges.ExpireTestCharge(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return ch.Public(c.links), nil
}

type medReturnRequest struct {
	// Amount defaults to what the payment has left after its refunds (in
	// flight or done) and earlier disputes.
	Amount *int64  `json:"amount"`
	Reason *string `json:"reason"`
}

// medReturn has the payer's PSP take money back from a paid test charge
// under the MED: the charge becomes disputed and the merchant is debited.
func (c *TestHelpersController) medReturn(w http.ResponseWriter, r *http.Request) (any, error) {
	caller, raw, err := testCharge(r)
	if err != nil {
		return nil, err
	}
	// Another account's charge is 404 whatever the body says.
	if _, err := c.charges.Get(r.Context(), caller, raw); err != nil {
		return nil, err
	}
	var req medReturnRequest
	if _, err := readJSON(w, r, true, &req); err != nil {
		return nil, err
	}
	if req.Reason == nil {
		return nil, badRequest("reason", "parameter_missing", "reason is required: \"fraud\", \"operational\" or, for a subscription cycle's charge, \"pix_automatico\"")
	}
	ch, err := c.charges.SimulateMedReturn(r.Context(), caller, raw, app.MedReturnInput{Amount: req.Amount, Reason: domain.DisputeReason(*req.Reason)})
	if err != nil {
		return nil, err
	}
	return ch.Public(c.links), nil
}
