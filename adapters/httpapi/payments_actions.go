package httpapi

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
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

// receipt draws a credited payment's receipt (comprovante) in the lang
// asked for (pt-BR by default, en).
func (c *PaymentsController) receipt(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	loc, err := domain.ParseLocale(r.URL.Query().Get("lang"))
	if err != nil {
		return nil, err
	}
	doc, err := c.receipts.PaymentReceipt(r.Context(), caller, raw, loc)
	if err != nil {
		return nil, err
	}
	return receiptBody(doc), nil
}

// refundReceipt draws a confirmed refund's receipt (comprovante de
// devolução); {refundId} is the re_ id or its raw part.
func (c *PaymentsController) refundReceipt(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	refundRaw := strings.TrimPrefix(mux.Vars(r)["refundId"], domain.PrefixRefund)
	if !domain.ValidRawID(refundRaw) {
		return nil, ports.ErrNotFound
	}
	loc, err := domain.ParseLocale(r.URL.Query().Get("lang"))
	if err != nil {
		return nil, err
	}
	doc, err := c.receipts.RefundReceipt(r.Context(), caller, raw, refundRaw, loc)
	if err != nil {
		return nil, err
	}
	return receiptBody(doc), nil
}

// receiptBody is the receipt answer of the spec, {contentType, base64},
// with the suggested file name.
func receiptBody(d app.Document) map[string]string {
	return map[string]string{"contentType": d.ContentType, "filename": d.Filename, "base64": base64.StdEncoding.EncodeToString(d.Body)}
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
