package httpapi

import (
	"net/http"

	"github.com/quitapix/quita/domain"
)

func (c *PaymentsController) stats(_ http.ResponseWriter, r *http.Request) (any, error) {
	days, err := intParam(r.URL.Query().Get("days"), "days", 1, 366, 30)
	if err != nil {
		return nil, err
	}
	return c.payments.Stats(r.Context(), callerFrom(r.Context()), days)
}

func (c *PaymentsController) metrics(_ http.ResponseWriter, r *http.Request) (any, error) {
	days, err := intParam(r.URL.Query().Get("days"), "days", 1, 366, 7)
	if err != nil {
		return nil, err
	}
	var cur domain.Currency
	if s := r.URL.Query().Get("currency"); s != "" {
		if cur, err = domain.ParseCurrency(s); err != nil {
			return nil, err
		}
	}
	return c.payments.Metrics(r.Context(), callerFrom(r.Context()), days, cur)
}
