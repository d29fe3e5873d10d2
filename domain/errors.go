package domain

import (
	"errors"
	"fmt"
)

// ValidationError reports one invalid input field. It names the field with a
// neutral Field, never a wire parameter: each adapter maps Field to its own
// names (the HTTP API has two wire formats that spell fields differently)
// and renders Message with the same mapping, so the text and the param
// always agree.
type ValidationError struct {
	// Field is the input the rule is about.
	Field Field
	// Indexed says the error is about the element at Index of a list-valued
	// Field rather than the field as a whole.
	Indexed bool
	Index   int
	// Code is CodeParameterMissing or CodeParameterInvalid.
	Code string
	// Err is the broken rule when a caller may want to react to it
	// (ErrUnknownEvent); nil otherwise.
	Err error

	// format and args make the message; a Field among args is rendered by
	// Message with the caller's name for it.
	format string
	args   []any
}

// NewValidationError returns a ValidationError about f whose message is
// fmt.Sprintf(format, args...), where every Field in args is written with
// the name the rendering adapter gives it.
func NewValidationError(f Field, code, format string, args ...any) *ValidationError {
	return &ValidationError{Field: f, Code: code, format: format, args: args}
}

// Message renders the explanation, writing each field as name spells it.
func (e *ValidationError) Message(name func(Field) string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		if f, ok := a.(Field); ok {
			a = name(f)
		}
		args[i] = a
	}
	return fmt.Sprintf(e.format, args...)
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: %s", e.Field, e.Message(func(f Field) string { return string(f) }))
}

// Is reports whether target is ErrValidation so callers can test the kind
// with errors.Is without a type assertion.
func (e *ValidationError) Is(target error) bool { return target == ErrValidation }

// Unwrap returns Err, so errors.Is finds the broken rule too.
func (e *ValidationError) Unwrap() error { return e.Err }

// ErrValidation is matched by every *ValidationError.
var ErrValidation = errors.New("validation failed")

// Validation codes used in ValidationError.Code.
const (
	CodeParameterMissing = "parameter_missing"
	CodeParameterInvalid = "parameter_invalid"
)

// Invalid returns a CodeParameterInvalid error about f (see NewValidationError).
func Invalid(f Field, format string, args ...any) *ValidationError {
	return NewValidationError(f, CodeParameterInvalid, format, args...)
}

// Missing returns the CodeParameterMissing error "<f> is required".
func Missing(f Field) *ValidationError {
	return NewValidationError(f, CodeParameterMissing, "%s is required", f)
}

var (
	// ErrChargeNotPayable is returned when a payment arrives for a charge that
	// no longer awaits one (already paid, expired, cancelled, ...).
	ErrChargeNotPayable = errors.New("charge is not awaiting payment")
	// ErrChargeExpired is returned for a payment made at or after
	// expires_at, whenever it is reported, and for a settling transition
	// asked at or after it.
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
