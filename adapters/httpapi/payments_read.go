package httpapi

import (
	"net/http"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func (c *PaymentsController) get(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	ch, err := c.payments.Charges().Get(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return c.txBody(ch, true), nil
}

type paymentsPage struct {
	Data  []txRead `json:"data"`
	Total int      `json:"total"`
	Page  int      `json:"page"`
	Limit int      `json:"limit"`
}

func (c *PaymentsController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	v := r.URL.Query()
	q := ports.PaymentQuery{Scope: callerFrom(r.Context()).Scope(), SortBy: v.Get("sortBy"), Desc: true}
	var err error
	if q.Page, err = intParam(v.Get("page"), "page", 1, 1_000_000, 1); err != nil {
		return nil, err
	}
	if q.Limit, err = intParam(v.Get("limit"), "limit", 1, 100, 20); err != nil {
		return nil, err
	}
	if s := v.Get("status"); s != "" {
		q.Status = domain.TxStatus(s)
		if !q.Status.Valid() {
			return nil, badRequest("status", "parameter_invalid", "status must be a transaction status such as WAITING_PAYMENT or PAID")
		}
	}
	switch v.Get("sortOrder") {
	case "", "desc":
	case "asc":
		q.Desc = false
	default:
		return nil, badRequest("sortOrder", "parameter_invalid", "sortOrder must be asc or desc")
	}
	for _, b := range []struct {
		param string
		dst   **time.Time
		end   bool
	}{{"startDate", &q.CreatedAfter, false}, {"endDate", &q.CreatedBefore, true}} {
		s := v.Get(b.param)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err == nil {
			t = inclusiveBound(t, b.end)
		} else {
			// A bare date covers its whole day (inclusive bounds).
			d, derr := time.Parse("2006-01-02", s)
			if derr != nil {
				return nil, badRequest(b.param, "parameter_invalid", b.param+" must be an ISO 8601 date or timestamp")
			}
			t = d
			if b.end {
				t = d.Add(24*time.Hour - time.Microsecond)
			}
		}
		t = t.UTC()
		if err := storableInstant(b.param, t); err != nil {
			return nil, err
		}
		*b.dst = &t
	}
	cs, total, err := c.payments.List(r.Context(), q)
	if err != nil {
		return nil, err
	}
	out := paymentsPage{Data: make([]txRead, 0, len(cs)), Total: total, Page: q.Page, Limit: q.Limit}
	for _, ch := range cs {
		out.Data = append(out.Data, c.txBody(ch, false))
	}
	return out, nil
}
