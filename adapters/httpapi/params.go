package httpapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/domain"
)

// wireParams names every domain.Field the way one wire format spells its
// request parameters. The domain names inputs neutrally; this file is the
// only place that knows what a client calls them, so an error's param and
// the field names inside its message always agree. Each table lists every
// domain.Field (TestWireParamsAreComplete).
type wireParams map[domain.Field]string

// chargesParams is the snake_case format of /v1/charges, /v1/webhooks, the
// dashboard and everything else that is not the payments surface.
var chargesParams = wireParams{
	domain.FieldID:               "id",
	domain.FieldAmount:           "amount",
	domain.FieldCurrency:         "currency",
	domain.FieldPaymentMethod:    "payment_method",
	domain.FieldDescription:      "description",
	domain.FieldExpiresIn:        "expires_in",
	domain.FieldCustomerName:     "customer.name",
	domain.FieldCustomerDocument: "customer.document",
	domain.FieldCustomerEmail:    "customer.email",
	domain.FieldCustomerPhone:    "customer.phone",
	domain.FieldExpectedPayer:    "expected_payer_tax_id",
	domain.FieldMetadata:         "metadata",
	domain.FieldMetadataPhone:    "metadata.phone",
	domain.FieldPayment:          "payment",
	domain.FieldStatus:           "status",
	domain.FieldPaidWith:         "paidWith",
	domain.FieldRefundStrategy:   "strategy",
	domain.FieldPayerDocument:    "payer_document",
	domain.FieldSortBy:           "sortBy",
	domain.FieldWebhookURL:       "url",
	domain.FieldEvents:           "events",
	domain.FieldAccountName:      "name",
	domain.FieldAccountEmail:     "email",
	domain.FieldPassword:         "password",
	domain.FieldSessionLabel:     "label",
	domain.FieldGuardSettings:    "settings",
	domain.FieldBlockedDocument:  "document",
	domain.FieldFeeMethod:        "method",
	domain.FieldFee:              "fee",
	domain.FieldAccountDocument:  "merchant_document",
	domain.FieldLang:             "lang",
	domain.FieldPixKey:           "destination.pix_key",
	domain.FieldPixKeyType:       "destination.type",
	domain.FieldFailureCode:      "failure_code",
	domain.FieldRefundKey:        "destinationKey",
	domain.FieldCustomerRef:      "customerId",
	domain.FieldDisputeReason:    "reason",
	domain.FieldPayerName:        "payer_name",
	domain.FieldDueDate:          "due_date",
	domain.FieldDaysAfterDue:     "days_after_due",
	domain.FieldFine:             "fine",
	domain.FieldInterest:         "interest",
	domain.FieldDiscount:         "discount",
	domain.FieldDiscountUntil:    "discount.until",
	domain.FieldAbatement:        "abatement",
	domain.FieldPaymentDate:      "date",
	domain.FieldInterval:         "interval",
	domain.FieldStartDate:        "start_date",
	domain.FieldEndDate:          "end_date",
	domain.FieldContract:         "contract",
	domain.FieldRetryPolicy:      "retry_policy",
	domain.FieldJourney:          "journey",
	domain.FieldVariable:         "variable",
	domain.FieldMaxAmount:        "variable.max_amount",
	domain.FieldFirstPayment:     "first_payment.amount",
	domain.FieldPayerAccount:     "payer_account",
	domain.FieldPayerISPB:        "payer_account.ispb",
	domain.FieldPayerBranch:      "payer_account.branch",
	domain.FieldPayerNumber:      "payer_account.number",
	domain.FieldSubaccountDoc:    "subaccount.document",
	domain.FieldSubaccountPixKey: "payout_pix_key",
	domain.FieldSplits:           "splits",
	domain.FieldSplitAccount:     "splits[].account",
	domain.FieldSplitAmount:      "splits[].amount",
	domain.FieldSplitPercent:     "splits[].percent",
	domain.FieldFeePayer:         "fee_payer",
	domain.FieldTransferDest:     "destination",
	domain.FieldAutoPayout:       "auto_payout",
}

// paymentsParams is the camelCase format of /v1/payments, /v1/wallets and
// their test helpers, registered through paramsRouter. It spells six
// fields its own way and the rest as chargesParams does.
var paymentsParams = chargesParams.with(wireParams{
	domain.FieldPaymentMethod:    "paymentMethods",
	domain.FieldCustomerName:     "customerName",
	domain.FieldCustomerDocument: "customerDocument",
	domain.FieldCustomerEmail:    "customerEmail",
	domain.FieldWebhookURL:       "webhookUrl",
	domain.FieldFeePayer:         "feePayer",
})

// subaccountsParams is the format of /v1/subaccounts: a sub-account's
// document is its own "document".
var subaccountsParams = chargesParams.with(wireParams{
	domain.FieldSubaccountDoc: "document",
})

// with returns a copy of p with the names in override replaced.
func (p wireParams) with(override wireParams) wireParams {
	out := maps.Clone(p)
	maps.Copy(out, override)
	return out
}

// name is f as this format spells it. A Field missing from the table (a
// test failure) falls back to its neutral words rather than an empty param.
func (p wireParams) name(f domain.Field) string {
	if n, ok := p[f]; ok {
		return n
	}
	return string(f)
}

// validation renders ve as this format's 400: the param names the field
// (and the list element, as "events[2]"), the message names fields alike.
func (p wireParams) validation(ve *domain.ValidationError) *apiError {
	param := p.name(ve.Field)
	switch {
	case ve.Indexed && strings.Contains(param, "[]"):
		// A field of a list's elements ("splits[].amount") names the element.
		param = strings.Replace(param, "[]", fmt.Sprintf("[%d]", ve.Index), 1)
	case ve.Indexed:
		param = fmt.Sprintf("%s[%d]", param, ve.Index)
	}
	msg := ve.Message(p.name)
	if errors.Is(ve, domain.ErrUnknownEvent) {
		msg += "; see GET /v1/webhooks/event-catalog"
	}
	return badRequest(param, ve.Code, msg)
}

// urlForbidden answers a webhook URL the SSRF guard refused.
func (p wireParams) urlForbidden() *apiError {
	n := p.name(domain.FieldWebhookURL)
	return badRequest(n, "url_not_allowed", n+" must not point at a loopback, private, link-local or metadata address")
}

type ctxParamsKey struct{}

// paramsFor is the wire format of the route serving ctx's request.
func paramsFor(ctx context.Context) wireParams {
	if p, ok := ctx.Value(ctxParamsKey{}).(wireParams); ok {
		return p
	}
	return chargesParams
}

// paramsRouter registers routes whose errors name fields in params instead
// of chargesParams.
type paramsRouter struct {
	*mux.Router
	params wireParams
}

// HandleFunc is mux.Router.HandleFunc with the route's wire format attached
// to every request.
func (r paramsRouter) HandleFunc(path string, f func(http.ResponseWriter, *http.Request)) *mux.Route {
	return r.Router.HandleFunc(path, r.withParams(f))
}

// Handle is HandleFunc for a handler, keeping its ownsKey mark.
func (r paramsRouter) Handle(path string, h http.Handler) *mux.Route {
	f := r.withParams(h.ServeHTTP)
	if _, ok := h.(keyOwner); ok {
		return r.Router.Handle(path, keyOwner(f))
	}
	return r.Router.HandleFunc(path, f)
}

func (r paramsRouter) withParams(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		f(w, req.WithContext(context.WithValue(req.Context(), ctxParamsKey{}, r.params)))
	}
}
