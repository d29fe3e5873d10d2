package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Error is an answer of the API outside 2xx, from its error envelope:
//
//	{"error": {"type", "code", "message", "param"}, "request_id"}
//
// Get it with errors.As; compare Code (stable, machine-readable) rather
// than Message (for humans, may change). Or test a family with errors.Is
// against the sentinels below, which match on Type and Code.
type Error struct {
	// HTTPStatus is the response's status code.
	HTTPStatus int
	// Type is the family: invalid_request_error, authentication_error,
	// permission_error, idempotency_error, rate_limit_error,
	// fraud_error, provider_error or api_error.
	Type string
	// Code is the precise reason, e.g. parameter_invalid,
	// idempotency_key_reused, charge_not_pending, fraud.velocity...
	Code string
	// Message explains the error to a developer.
	Message string
	// Param names the request parameter at fault, as sent (e.g. amount,
	// customer.document, Idempotency-Key), when there is one.
	Param string
	// RequestID identifies the request in the server's logs: quote it
	// when you ask for support.
	RequestID string
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "quita: %d %s", e.HTTPStatus, e.Code)
	if e.Param != "" {
		fmt.Fprintf(&b, " (param %s)", e.Param)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// Is lets errors.Is match an *Error against a sentinel: every non-empty
// field of target (Type, Code) and a non-zero HTTPStatus must be equal.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return (t.Type == "" || t.Type == e.Type) && (t.Code == "" || t.Code == e.Code) &&
		(t.HTTPStatus == 0 || t.HTTPStatus == e.HTTPStatus)
}

// Sentinels for errors.Is. Each matches any *Error of its kind.
var (
	// ErrNotFound: the resource does not exist, or belongs to another
	// account or mode (404).
	ErrNotFound = &Error{HTTPStatus: http.StatusNotFound}
	// ErrUnauthorized: the API key or dashboard token is missing or
	// invalid (401).
	ErrUnauthorized = &Error{HTTPStatus: http.StatusUnauthorized}
	// ErrInvalidRequest: the request itself is wrong; Param names the
	// field. Retrying it unchanged gives the same answer.
	ErrInvalidRequest = &Error{Type: "invalid_request_error"}
	// ErrIdempotencyKeyReused: the key was used before with a different
	// request (409): use a new key for a new operation.
	ErrIdempotencyKeyReused = &Error{Code: "idempotency_key_reused"}
	// ErrRateLimited: too many requests (429); the client already
	// retried as its policy allows.
	ErrRateLimited = &Error{HTTPStatus: http.StatusTooManyRequests}
	// ErrFraud: the fraud or velocity guard refused the charge (403,
	// code fraud.*).
	ErrFraud = &Error{Type: "fraud_error"}
)

type errorEnvelope struct {
	Error struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// parseError reads an error answer. A body that is not the envelope (a
// proxy's HTML page) still gives an *Error with the status.
func parseError(status int, body []byte, hdr http.Header, now time.Time) *Error {
	e := &Error{HTTPStatus: status, RequestID: hdr.Get("X-Request-Id"), RetryAfter: parseRetryAfter(hdr.Get("Retry-After"), now)}
	var env errorEnvelope
	if json.Unmarshal(body, &env) == nil && env.Error.Code != "" {
		e.Type, e.Code, e.Message, e.Param = env.Error.Type, env.Error.Code, env.Error.Message, env.Error.Param
		if env.RequestID != "" {
			e.RequestID = env.RequestID
		}
		return e
	}
	e.Type, e.Code = "api_error", "http_"+fmt.Sprint(status)
	e.Message = http.StatusText(status)
	if s := strings.TrimSpace(string(body)); s != "" && len(s) <= 200 {
		e.Message += ": " + s
	}
	return e
}
