package httpapi

import (
	"encoding/base64"
	"net/http"

	"github.com/quitapix/quita/app"
)

func (c *PaymentsController) cancel(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	ch, err := c.payments.Cancel(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return c.txBody(ch, false), nil
}

func (c *PaymentsController) receipt(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	pdf, err := c.payments.Receipt(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return map[string]string{"contentType": "application/pdf", "base64": base64.StdEncoding.EncodeToString(pdf)}, nil
}

func (c *PaymentsController) providerStatus(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	res, err := c.payments.ProviderStatus(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"localStatus": res.Charge.Status(), "provider": res.Provider, "providerTransactionId": res.ProviderRef,
		"providerStatus": res.Status.Status, "rawResponse": res.Status.RawResponse,
	}, nil
}

func (c *PaymentsController) resend(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	ch, err := c.payments.ResendWebhook(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	return map[string]any{"resent": true, "status": ch.Status()}, nil
}
