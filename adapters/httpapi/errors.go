package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Error types of the envelope.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typeIdempotency    = "idempotency_error"
	typeProvider       = "provider_error"
	typeAPI            = "api_error"
	typePermission     = "permission_error"
	typeFraud          = "fraud_error"
	typeRateLimit      = "rate_limit_error"
)

// apiError is an answer the handler chose; writeError renders it as is.
type apiError struct {
	Status  int
	Type    string
	Code    string
	Message string
	Param   string
	// retryAfter, in seconds, is sent as Retry-After when positive.
	retryAfter int
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func badRequest(param, code, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: code, Message: msg, Param: param}
}

type errorBody struct {
	Error     errorDetail `json:"error"`
	RequestID string      `json:"request_id"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

// errInternal answers an error classify does not know, and a panic.
var errInternal = &apiError{Status: http.StatusInternalServerError, Type: typeAPI, Code: "internal_error",
	Message: "something went wrong on our side; it is safe to retry with the same Idempotency-Key"}

// classify maps every error the handlers may see to status, type and code,
// naming fields as params does. It is the one place that knows the mapping;
// an error it does not know is a logged 500 with a generic message.
func classify(params wireParams, err error) *apiError {
	var (
		ae *apiError
		ve *domain.ValidationError
		mb *http.MaxBytesError
		te *app.ThrottledError
		fe *app.FraudError
	)
	if sub := classifySubscription(params, err); sub != nil {
		return sub
	}
	if m := classifyMarketplace(params, err); m != nil {
		return m
	}
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ve):
		return params.validation(ve)
	case errors.Is(err, ports.ErrUnstorableValue):
		// The parsers refuse such values naming their param; this is
		// what reaches here when one was missed. Nothing was run.
		return badRequest("", "parameter_invalid",
			"a value in the request is outside what can be stored (instants: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)")
	case errors.As(err, &mb):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large",
			Message: fmt.Sprintf("request body is larger than %d MiB", max(mb.Limit>>20, 1))}
	case errors.Is(err, app.ErrUnauthenticated):
		return &apiError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "api_key_invalid",
			Message: "the apikey header does not hold a valid API key"}
	case errors.Is(err, app.ErrTooManyEndpoints):
		return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "endpoint_limit_reached",
			Message: fmt.Sprintf("an account may have at most %d webhook endpoints per mode; delete one first", app.MaxEndpoints)}
	case errors.Is(err, ports.ErrURLForbidden):
		return params.urlForbidden()
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, app.ErrTestModeOnly):
		return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_not_found",
			Message: "no such resource"}
	case errors.Is(err, app.ErrIdempotencyKeyReused):
		return &apiError{Status: http.StatusConflict, Type: typeIdempotency, Code: "idempotency_key_reused",
			Message: "this Idempotency-Key was already used with a different request"}
	case errors.Is(err, app.ErrIdempotencyKeyInUse):
		retry := 1
		if inUse := (*app.KeyInUseError)(nil); errors.As(err, &inUse) {
			retry = max(ceilSeconds(inUse.Remaining), 1)
		}
		return &apiError{Status: http.StatusConflict, Type: typeIdempotency, Code: "idempotency_key_in_use",
			Message: "a request with this Idempotency-Key is still in progress; retry shortly", retryAfter: retry}
	case errors.Is(err, app.ErrDueDateNotSupported):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "due_date_not_supported",
			Message: "the acquirer of this account does not support due-date charges yet; create the charge without due_date",
			Param:   params.name(domain.FieldDueDate)}
	case errors.Is(err, domain.ErrNotDueDateCharge):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "charge_not_due_date",
			Message: "the charge has no due date: it is paid for its amount"}
	case errors.Is(err, domain.ErrOverdueClosed):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "charge_overdue_closed",
			Message: "the date is after the charge's last payable day (due_date plus days_after_due): it can no longer be paid"}
	case errors.Is(err, domain.ErrBeforeCreation):
		return badRequest("date", "parameter_invalid", "date must not be before the day the charge was created (in Brasília)")
	case errors.Is(err, domain.ErrChargeExpired):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "charge_expired",
			Message: "the charge has expired; create a new charge"}
	case errors.Is(err, domain.ErrChargeNotPayable), errors.Is(err, domain.ErrChargeNotExpirable):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "charge_not_pending",
			Message: "the charge is not awaiting payment"}
	case errors.Is(err, domain.ErrChargeNotRevisable):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "charge_not_pending",
			Message: "the charge is not awaiting payment (paid, expired, cancelled or past its last payable day): its terms cannot be revised"}
	case errors.Is(err, app.ErrRevisionConflict):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "charge_revision_conflict",
			Message: "other revisions of this charge's terms kept committing first; read the charge and revise again"}
	case errors.Is(err, domain.ErrChargeNotCancellable):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "charge_not_cancellable",
			Message: "only WAITING_PAYMENT, PENDING and PROCESSING charges can be cancelled"}
	case errors.Is(err, ports.ErrStoreUnavailable):
		return &apiError{Status: http.StatusServiceUnavailable, Type: typeAPI, Code: "service_unavailable",
			Message:    "the service is briefly unavailable and nothing was changed; retry with backoff using the same Idempotency-Key",
			retryAfter: 2}
	case errors.Is(err, ports.ErrAcquirerUnavailable):
		return &apiError{Status: http.StatusServiceUnavailable, Type: typeProvider, Code: "acquirer_unavailable",
			Message: "the acquirer is unavailable; retry with backoff using the same Idempotency-Key"}
	case errors.Is(err, app.ErrCashoutNotSupported):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeProvider, Code: "cashout_not_supported",
			Message: "this payment's provider (API Pix) refunds only by devolution; send strategy \"devolution\"", Param: "strategy"}
	case errors.Is(err, app.ErrCashoutDestinationNotAllowed):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "cashout_destination_not_allowed",
			Message: "this account sends cashout refunds only to the payer's own CPF/CNPJ, as the payer's bank disclosed it; " +
				"send that document as destinationKey (or none), or refund with strategy \"devolution\", which returns the " +
				"original Pix to the account that paid", Param: params.name(domain.FieldRefundKey)}
	case errors.Is(err, app.ErrCashoutFeeRequired):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "cashout_fee_required",
			Message: "a cashout to a key other than the payer's own CPF/CNPJ is a Pix out like a payout and bears the Pix-out fee; " +
				"send passFeeToTenant true to have it debited from your wallet with the amount, or refund to the payer " +
				"(no destinationKey, or strategy \"devolution\")", Param: "passFeeToTenant"}
	case errors.Is(err, ports.ErrAcquirerRejected), errors.Is(err, ports.ErrAcquirerUnauthorized),
		errors.Is(err, ports.ErrAcquirerNotConfigured):
		// The merchant's answer stays what it was before the kinds were
		// told apart; the worker is what treats them differently.
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeProvider, Code: "acquirer_rejected",
			Message: "the acquirer rejected the request"}
	case errors.Is(err, domain.ErrRefundExceedsAmount):
		return badRequest("amount", "refund_exceeds_amount", "amount exceeds what remains refundable on this transaction")
	case errors.Is(err, domain.ErrChargeNotDisputable):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "charge_not_disputable",
			Message: "only a charge whose payment was credited to the merchant can be disputed"}
	case errors.Is(err, domain.ErrDisputeExceedsAmount):
		return badRequest("amount", "dispute_exceeds_amount", "amount exceeds what the payment has left after its refunds and disputes")
	case errors.Is(err, domain.ErrChargeNotRefundable):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "charge_not_refundable",
			Message: "only PAID or APPROVED transactions can be refunded"}
	case errors.Is(err, domain.ErrRefundNotSupported):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeProvider, Code: "REFUND_NOT_SUPPORTED",
			Message: "the provider of this payment method cannot refund"}
	case errors.Is(err, app.ErrPayoutExceedsAvailable):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "insufficient_balance",
			Message: "the available balance cannot cover this payout's amount and fee", Param: "amount"}
	case errors.Is(err, domain.ErrPayoutNotCancellable):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "payout_not_cancellable",
			Message: "only pending payouts can be cancelled; this one is already on its way or final"}
	case errors.Is(err, domain.ErrPayoutNotOpen):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "payout_not_open",
			Message: "the payout is already paid, failed or cancelled"}
	case errors.Is(err, domain.ErrInsufficientBalance):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "insufficient_balance",
			Message: "the wallet balance cannot cover this refund"}
	case errors.Is(err, domain.ErrRefundNotOpen):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "refund_not_open",
			Message: "the refund is already REFUNDED or FAILED"}
	case errors.Is(err, domain.ErrInvalidTransition):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "invalid_transition",
			Message: "the state machine does not allow this status change"}
	case errors.Is(err, app.ErrNoProviderReference):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeProvider, Code: "TRANSACTION_HAS_NO_PROVIDER_REFERENCE",
			Message: "the transaction never reached a provider"}
	case errors.Is(err, app.ErrReceiptsBusy):
		return &apiError{Status: http.StatusServiceUnavailable, Type: typeAPI, Code: "service_unavailable",
			Message: "too many receipts are being drawn right now; retry after the Retry-After delay", retryAfter: 1}
	case errors.Is(err, app.ErrReceiptUnavailable):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeProvider, Code: "receipt_unavailable",
			Message: "a receipt exists only for settled transactions"}
	case errors.Is(err, context.Canceled):
		return &apiError{Status: 499, Type: typeAPI, Code: "request_cancelled", Message: "the request was cancelled"}
	case errors.Is(err, app.ErrTooManyWaiters):
		return &apiError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "too_many_waiting_requests",
			Message:    "this account has too many requests waiting for events; retry after the Retry-After delay",
			retryAfter: 1}
	case errors.As(err, &te):
		return &apiError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limited",
			Message: "too many requests; retry after the Retry-After delay", retryAfter: max(ceilSeconds(te.RetryAfter), 1)}
	case errors.As(err, &fe):
		return &apiError{Status: http.StatusForbidden, Type: typeFraud, Code: fe.Code, Message: fe.Message}
	case errors.Is(err, app.ErrInvalidCredentials):
		return &apiError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_credentials",
			Message: "the e-mail or password is wrong"}
	case errors.Is(err, app.ErrInvalidSession):
		return &apiError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "token_invalid",
			Message: "the dashboard token is invalid, expired or logged out; log in again"}
	case errors.Is(err, app.ErrSecondFactorRequired):
		return &apiError{Status: http.StatusForbidden, Type: typePermission, Code: "second_factor_required", Param: "code",
			Message: "a live API key needs a fresh code of the authenticator app: send it as code"}
	case errors.Is(err, app.ErrInvalidSecondFactor):
		return &apiError{Status: http.StatusForbidden, Type: typePermission, Code: "invalid_second_factor", Param: "code",
			Message: "the code is wrong or was already used; wait for the next one"}
	case errors.Is(err, ports.ErrAPIKeyRevoked):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "api_key_revoked",
			Message: "the API key is already revoked"}
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, ports.ErrNotFound) }

// writeError answers err in the error envelope.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := classify(paramsFor(r.Context()), err)
	if ae == nil {
		slog.ErrorContext(r.Context(), "unhandled error", "err", err, "path", r.URL.Path)
		ae = errInternal
	}
	if errors.Is(err, ports.ErrStoreUnavailable) {
		slog.WarnContext(r.Context(), "database unavailable", "err", err, "path", r.URL.Path)
	}
	if ae.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.retryAfter))
	}
	if s := stateOf(r.Context()); s != nil {
		s.code = ae.Code // for the access-log line
	}
	writeJSON(w, ae.Status, errorBody{
		Error:     errorDetail{Type: ae.Type, Code: ae.Code, Message: ae.Message, Param: ae.Param},
		RequestID: requestID(r.Context()),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"type":"api_error","code":"internal_error","message":"response encoding failed"}}`)
	}
	writeRaw(w, status, body)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
