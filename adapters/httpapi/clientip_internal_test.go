package httpapi

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/mocks"
)

// A key this process has authenticated passes whatever its
// address's failure count, so its requests do not ask the counter (a Redis
// round trip each); an unknown key from a blocked address is refused.
func TestAuthFailuresSkipTheCounterForKnownKeys(t *testing.T) {
	t.Parallel()
	counter := &mocks.LoginAttemptsMock{FailuresFunc: func(context.Context, string) (int, time.Duration, error) {
		return maxAuthFailuresPerIP, 30 * time.Second, nil
	}}
	f := newAuthFailures(counter)
	const known, unknown = "qt_test_known", "qt_test_unknown"
	if wait, blocked := f.blocked(t.Context(), "203.0.113.9", unknown); !blocked || wait != 30*time.Second {
		t.Fatalf("an unknown key from a blocked address: blocked %v, wait %v", blocked, wait)
	}
	f.succeeded(known)
	before := len(counter.FailuresCalls())
	for range 3 {
		if _, blocked := f.blocked(t.Context(), "203.0.113.9", known); blocked {
			t.Fatal("a known key from a blocked address was refused")
		}
	}
	if n := len(counter.FailuresCalls()) - before; n != 0 {
		t.Errorf("the counter was asked %d times for a known key, want 0", n)
	}
}
