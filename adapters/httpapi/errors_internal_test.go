package httpapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
)

// Issue 11 item 19: a key in use says how long its claim lasts, rounded
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
