package httpapi

// An internal test: the tables are unexported because nothing outside the
// HTTP adapter may know the wire names.

import (
	"net/http"
	"testing"

	"github.com/quitapix/quita/domain"
)

// Every neutral field has exactly the name each wire format has always
// used; a change here changes the public API.
func TestWireParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		field             domain.Field
		charges, payments string
	}{
		{domain.FieldID, "id", "id"},
		{domain.FieldAmount, "amount", "amount"},
		{domain.FieldCurrency, "currency", "currency"},
		{domain.FieldPaymentMethod, "payment_method", "paymentMethods"},
		{domain.FieldDescription, "description", "description"},
		{domain.FieldExpiresIn, "expires_in", "expires_in"},
		{domain.FieldCustomerName, "customer.name", "customerName"},
		{domain.FieldCustomerDocument, "customer.document", "customerDocument"},
		{domain.FieldCustomerEmail, "customer.email", "customerEmail"},
		{domain.FieldCustomerPhone, "customer.phone", "customer.phone"},
		{domain.FieldExpectedPayer, "expected_payer_tax_id", "expected_payer_tax_id"},
		{domain.FieldMetadata, "metadata", "metadata"},
		{domain.FieldMetadataPhone, "metadata.phone", "metadata.phone"},
		{domain.FieldPayment, "payment", "payment"},
		{domain.FieldStatus, "status", "status"},
		{domain.FieldPaidWith, "paidWith", "paidWith"},
		{domain.FieldRefundStrategy, "strategy", "strategy"},
		{domain.FieldPayerDocument, "payer_document", "payer_document"},
		{domain.FieldSortBy, "sortBy", "sortBy"},
		{domain.FieldWebhookURL, "url", "webhookUrl"},
		{domain.FieldEvents, "events", "events"},
		{domain.FieldAccountName, "name", "name"},
		{domain.FieldAccountEmail, "email", "email"},
		{domain.FieldPassword, "password", "password"},
		{domain.FieldSessionLabel, "label", "label"},
		{domain.FieldGuardSettings, "settings", "settings"},
		{domain.FieldBlockedDocument, "document", "document"},
		{domain.FieldFeeMethod, "method", "method"},
		{domain.FieldFee, "fee", "fee"},
		{domain.FieldAccountDocument, "merchant_document", "merchant_document"},
		{domain.FieldLang, "lang", "lang"},
		{domain.FieldPixKey, "destination.pix_key", "destination.pix_key"},
		{domain.FieldPixKeyType, "destination.type", "destination.type"},
		{domain.FieldFailureCode, "failure_code", "failure_code"},
		{domain.FieldRefundKey, "destinationKey", "destinationKey"},
		{domain.FieldCustomerRef, "customerId", "customerId"},
		{domain.FieldDisputeReason, "reason", "reason"},
		{domain.FieldPayerName, "payer_name", "payer_name"},
		{domain.FieldDueDate, "due_date", "due_date"},
		{domain.FieldDaysAfterDue, "days_after_due", "days_after_due"},
		{domain.FieldFine, "fine", "fine"},
		{domain.FieldInterest, "interest", "interest"},
		{domain.FieldDiscount, "discount", "discount"},
		{domain.FieldDiscountUntil, "discount.until", "discount.until"},
		{domain.FieldAbatement, "abatement", "abatement"},
		{domain.FieldPaymentDate, "date", "date"},
		{domain.FieldInterval, "interval", "interval"},
		{domain.FieldStartDate, "start_date", "start_date"},
		{domain.FieldEndDate, "end_date", "end_date"},
		{domain.FieldContract, "contract", "contract"},
		{domain.FieldRetryPolicy, "retry_policy", "retry_policy"},
		{domain.FieldJourney, "journey", "journey"},
		{domain.FieldVariable, "variable", "variable"},
		{domain.FieldMaxAmount, "variable.max_amount", "variable.max_amount"},
		{domain.FieldFirstPayment, "first_payment.amount", "first_payment.amount"},
		{domain.FieldPayerAccount, "payer_account", "payer_account"},
		{domain.FieldPayerISPB, "payer_account.ispb", "payer_account.ispb"},
		{domain.FieldPayerBranch, "payer_account.branch", "payer_account.branch"},
		{domain.FieldPayerNumber, "payer_account.number", "payer_account.number"},
		{domain.FieldSubaccountDoc, "subaccount.document", "subaccount.document"},
		{domain.FieldSubaccountPixKey, "payout_pix_key", "payout_pix_key"},
		{domain.FieldSplits, "splits", "splits"},
		{domain.FieldSplitAccount, "splits[].account", "splits[].account"},
		{domain.FieldSplitAmount, "splits[].amount", "splits[].amount"},
		{domain.FieldSplitPercent, "splits[].percent", "splits[].percent"},
		{domain.FieldFeePayer, "fee_payer", "feePayer"},
		{domain.FieldTransferDest, "destination", "destination"},
		{domain.FieldAutoPayout, "auto_payout", "auto_payout"},
	}
	if len(tests) != len(domain.Fields) {
		t.Errorf("%d rows for %d domain.Fields: add the new field here", len(tests), len(domain.Fields))
	}
	for _, tt := range tests {
		for _, w := range []struct {
			format string
			params wireParams
			want   string
		}{{"charges", chargesParams, tt.charges}, {"payments", paymentsParams, tt.payments}} {
			if got := w.params[tt.field]; got != w.want {
				t.Errorf("%s name of %q = %q, want %q", w.format, tt.field, got, w.want)
			}
			// The param and the message name the field alike.
			ae := w.params.validation(domain.Invalid(tt.field, "%s is wrong", tt.field))
			if ae.Param != w.want || ae.Message != w.want+" is wrong" || ae.Code != domain.CodeParameterInvalid || ae.Status != http.StatusBadRequest {
				t.Errorf("%s: %q rendered as %+v", w.format, tt.field, ae)
			}
		}
	}
}

// A table that lacks a field would leak the neutral words onto the wire, and
// a name used twice would make a param ambiguous.
func TestWireParamsAreComplete(t *testing.T) {
	t.Parallel()
	for format, params := range map[string]wireParams{"charges": chargesParams, "payments": paymentsParams} {
		if len(params) != len(domain.Fields) {
			t.Errorf("%s: %d names for %d fields", format, len(params), len(domain.Fields))
		}
		seen := map[string]domain.Field{}
		for _, f := range domain.Fields {
			n, ok := params[f]
			if !ok || n == "" {
				t.Errorf("%s: no name for %q", format, f)
				continue
			}
			if prev, dup := seen[n]; dup {
				t.Errorf("%s: %q names both %q and %q", format, n, prev, f)
			}
			seen[n] = f
		}
	}
}

// Messages that name a second field, list elements, the event catalog hint
// and the SSRF refusal read exactly as they always have on each format.
func TestWireParamsMessages(t *testing.T) {
	t.Parallel()
	_, unknownEvent := domain.ValidateEvents([]string{"charge.paid", "payment.created", "nope"})
	ve, _ := unknownEvent.(*domain.ValidationError)
	if ve == nil {
		t.Fatalf("ValidateEvents = %v, want a *ValidationError", unknownEvent)
	}
	lock := domain.NewValidationError(domain.FieldCustomerName, domain.CodeParameterMissing,
		"%s is required when %s is set", domain.FieldCustomerName, domain.FieldExpectedPayer)
	paidWith := domain.Invalid(domain.FieldPaidWith, "%s must be one of the transaction's %s", domain.FieldPaidWith, domain.FieldPaymentMethod)
	tests := []struct {
		name        string
		got         *apiError
		param, code string
		message     string
	}{
		{"unknown event", chargesParams.validation(ve), "events[2]", domain.CodeParameterInvalid,
			`unknown event "nope"; see GET /v1/webhooks/event-catalog`},
		{"payer lock without a name, charges", chargesParams.validation(lock), "customer.name", domain.CodeParameterMissing,
			"customer.name is required when expected_payer_tax_id is set"},
		{"payer lock without a name, payments", paymentsParams.validation(lock), "customerName", domain.CodeParameterMissing,
			"customerName is required when expected_payer_tax_id is set"},
		{"paidWith, payments", paymentsParams.validation(paidWith), "paidWith", domain.CodeParameterInvalid,
			"paidWith must be one of the transaction's paymentMethods"},
		{"missing", paymentsParams.validation(domain.Missing(domain.FieldPaymentMethod)), "paymentMethods", domain.CodeParameterMissing,
			"paymentMethods is required"},
		{"url forbidden, charges", chargesParams.urlForbidden(), "url", "url_not_allowed",
			"url must not point at a loopback, private, link-local or metadata address"},
		{"url forbidden, payments", paymentsParams.urlForbidden(), "webhookUrl", "url_not_allowed",
			"webhookUrl must not point at a loopback, private, link-local or metadata address"},
	}
	for _, tt := range tests {
		if tt.got.Param != tt.param || tt.got.Code != tt.code || tt.got.Message != tt.message || tt.got.Status != http.StatusBadRequest {
			t.Errorf("%s: got param %q code %q message %q status %d\nwant param %q code %q message %q status 400",
				tt.name, tt.got.Param, tt.got.Code, tt.got.Message, tt.got.Status, tt.param, tt.code, tt.message)
		}
	}
}
