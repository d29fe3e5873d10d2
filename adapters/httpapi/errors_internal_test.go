package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/ports"
)

// A key in use says how long its claim lasts (security.md, item 19), rounded
// up to whole seconds, instead of a fixed second.
func TestKeyInUseRetryAfterIsTheClaimsRemainingTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{app.ErrIdempotencyKeyInUse, 1},
		{&app.KeyInUseError{}, 1},
		{&app.KeyInUseError{Remaining: 300 * time.Millisecond}, 1},
		{&app.KeyInUseError{Remaining: 3200 * time.Millisecond}, 4},
		{fmt.Errorf("create: %w", &app.KeyInUseError{Remaining: 5 * time.Second}), 5},
	} {
		ae := classify(chargesParams, tc.err)
		if ae.Status != 409 || ae.Code != "idempotency_key_in_use" || ae.retryAfter != tc.want {
			t.Errorf("%v: %d %s Retry-After %d, want 409 idempotency_key_in_use %d", tc.err, ae.Status, ae.Code, ae.retryAfter, tc.want)
		}
	}
}

// A value the store refused to write into a statement is the request's
// fault and says so, without the statement or the store's text: 400, never
// a 500.
func TestUnstorableValueIsABadRequest(t *testing.T) {
	t.Parallel()
	ae := classify(chargesParams, fmt.Errorf("list: %w", ports.ErrUnstorableValue))
	if ae == nil || ae.Status != 400 || ae.Type != typeInvalidRequest || ae.Code != "parameter_invalid" {
		t.Fatalf("classify(ErrUnstorableValue) = %+v, want 400 invalid_request_error parameter_invalid", ae)
	}
	if strings.Contains(ae.Message, "?!(") || strings.Contains(ae.Message, ports.ErrUnstorableValue.Error()) {
		t.Errorf("message %q repeats the store's text", ae.Message)
	}
}

// A receipt that found every drawing slot taken is a 503 the client may
// retry after a second, like the other refusals of an overloaded process.
func TestReceiptsBusyIsServiceUnavailable(t *testing.T) {
	t.Parallel()
	ae := classify(paymentsParams, fmt.Errorf("receipt: %w", app.ErrReceiptsBusy))
	if ae == nil || ae.Status != 503 || ae.Code != "service_unavailable" || ae.retryAfter != 1 {
		t.Fatalf("classify(ErrReceiptsBusy) = %+v, want 503 service_unavailable with Retry-After 1", ae)
	}
}
