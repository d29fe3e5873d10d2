package httpapi

import (
	"errors"
	"net/http"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// classifySubscription maps the errors of subscriptions (classify's part
// for them): nil for any other error.
func classifySubscription(params wireParams, err error) *apiError {
	conflict := func(code, msg string) *apiError {
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: code, Message: msg}
	}
	switch {
	case errors.Is(err, ports.ErrPayerAccountRequired):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "payer_account_required",
			Message: "this account's acquirer sends an authorization_request to the payer's bank account: send payer_account {ispb, branch, number}, or choose a QR journey",
			Param:   params.name(domain.FieldPayerAccount)}
	case errors.Is(err, app.ErrRecurringNotSupported):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeProvider, Code: "subscriptions_not_supported",
			Message: "the acquirer of this account does not offer Pix Automático (subscriptions) in this mode"}
	case errors.Is(err, domain.ErrSubscriptionNotPending):
		return conflict("subscription_not_pending_authorization", "the subscription's mandate is no longer awaiting the payer's authorization")
	case errors.Is(err, domain.ErrAuthorizationExpired):
		return conflict("authorization_expired", "the subscription's mandate was not authorized before authorization_expires_at")
	case errors.Is(err, domain.ErrSubscriptionNotActive):
		return conflict("subscription_not_active", "the subscription is not active")
	case errors.Is(err, domain.ErrSubscriptionNotCancellable):
		return conflict("subscription_not_cancellable", "the subscription already ended (rejected, expired, cancelled or completed)")
	case errors.Is(err, domain.ErrNoMoreCycles):
		return conflict("subscription_no_more_cycles", "the subscription's schedule has no cycle left (end_date)")
	case errors.Is(err, domain.ErrCycleWindowClosed):
		return conflict("cycle_window_closed", "the next cycle's charge can no longer be set: its window closed 2 days before its due date")
	case errors.Is(err, domain.ErrCycleAmountNotSet):
		return conflict("cycle_amount_not_set", "the next cycle of this variable subscription has no amount: set it with POST /v1/subscriptions/{id}/charges")
	case errors.Is(err, domain.ErrSubscriptionNotVariable):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "subscription_not_variable",
			Message: "the subscription has a fixed amount: its cycles take no amount of their own", Param: params.name(domain.FieldAmount)}
	}
	return nil
}
