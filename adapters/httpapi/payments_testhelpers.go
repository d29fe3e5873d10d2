package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type transitionRequest struct {
	Status   string `json:"status"`
	PaidWith string `json:"paidWith"`
}

func (c *PaymentsController) transition(w http.ResponseWriter, r *http.Request) (any, error) {
	caller, raw, err := testCharge(r)
	if err != nil {
		return nil, err
	}
	if _, err := c.payments.Charges().Get(r.Context(), caller, raw); err != nil {
		return nil, err
	}
	var req transitionRequest
	if _, err := readJSON(w, r, true, &req); err != nil {
		return nil, err
	}
	if req.Status == "" {
		return nil, badRequest("status", "parameter_missing", "status is required")
	}
	ch, err := c.payments.Transition(r.Context(), caller, raw, domain.TxStatus(req.Status), domain.Method(req.PaidWith))
	if err != nil {
		return nil, err
	}
	return c.txBody(ch, false), nil
}

func (c *PaymentsController) failRefund(w http.ResponseWriter, r *http.Request) (any, error) {
	caller := callerFrom(r.Context())
	raw := strings.TrimPrefix(mux.Vars(r)["id"], domain.PrefixRefund)
	if caller.Mode != domain.ModeTest || !domain.ValidRawID(raw) {
		return nil, ports.ErrNotFound
	}
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	rf, err := c.payments.FailRefund(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return refundBody(rf), nil
}
