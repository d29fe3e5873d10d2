package domain

import (
	"errors"
	"fmt"
)

// ValidationError reports one invalid input field. Param names the field as
// the caller sent it (for example "customer.email"), so an HTTP adapter can
// point the merchant at it.
type ValidationError struct {
	Param   string
	Code    string
	Message string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: %s", e.Param, e.Message)
}

// Is reports whether target is ErrValidation so callers can test the kind
// with errors.Is without a type assertion.
func (e *ValidationError) Is(target error) bool { return target == ErrValidation }

// ErrValidation is matched by every *ValidationError.
var ErrValidation = errors.New("validation failed")

// Validation codes used in ValidationError.Code.
const (
	CodeParameterMissing = "parameter_missing"
	CodeParameterInvalid = "parameter_invalid"
)

func invalid(param, format string, args ...any) error {
	return &ValidationError{Param: param, Code: CodeParameterInvalid, Message: fmt.Sprintf(format, args...)}
}

func missing(param string) error {
	return &ValidationError{Param: param, Code: CodeParameterMissing, Message: param + " is required"}
}

var (
	// ErrChargeNotPayable is returned when a payment arrives for a charge that
	// no longer awaits one (already paid, expired, cancelled, ...).
	ErrChargeNotPayable = errors.New("charge is not awaiting payment")
	// ErrChargeExpired is returned when a payment arrives after expires_at.
	ErrChargeExpired = errors.New("charge has expired")
	// ErrChargeNotCancellable is returned by Cancel outside WAITING_PAYMENT,
	// PENDING and PROCESSING: a settled charge must be refunded instead.
	ErrChargeNotCancellable = errors.New("charge cannot be cancelled in its current status")
	// ErrChargeNotExpirable is returned by Expire for a charge that is not
	// awaiting payment.
	ErrChargeNotExpirable = errors.New("charge is not pending")
	// ErrInvalidTransition is returned when a status change is not in the
	// transition table.
	ErrInvalidTransition = errors.New("status transition not allowed")
	// ErrPixAlreadyAttached is returned when acquirer data is attached twice.
	ErrPixAlreadyAttached = errors.New("charge already has pix data")
)
