package idempotency_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// newFakeClock is a clock the test moves by hand.
func newFakeClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

func TestMemoryContract(t *testing.T) {
	t.Parallel()
	testContract(t, func(t *testing.T) harness {
		clock := newFakeClock()
		return harness{
			cache:    idempotency.NewMemory(clock.Now),
			shortTTL: 200 * time.Millisecond,
			elapse:   clock.Advance,
		}
	})
}

func TestMemoryEvictsTheOldestWrittenPastItsBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newFakeClock()
	m := idempotency.NewMemoryWithLimit(clock.Now, 3)

	for _, k := range []string{"k1", "k2", "k3"} {
		mustBegin(t, m, k, fpA)
	}
	// Rewriting k1 makes it the newest, so k2 is the oldest now.
	if err := m.Complete(ctx, "k1", fpA, 201, []byte("{}"), time.Hour); err != nil {
		t.Fatal(err)
	}
	mustBegin(t, m, "k4", fpA)

	if got := m.Len(); got != 3 {
		t.Errorf("Len = %d, want 3", got)
	}
	for k, want := range map[string]ports.ClaimState{
		"k1": ports.ClaimCompleted,
		"k2": ports.ClaimAcquired, // evicted, so free again
		"k4": ports.ClaimInFlight,
	} {
		claim, err := m.Begin(ctx, k, fpB, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if claim.State != want {
			t.Errorf("Begin(%s).State = %d, want %d", k, claim.State, want)
		}
	}
}

func TestMemorySweepsExpiredEntries(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	m := idempotency.NewMemory(clock.Now)

	for i := range 100 {
		mustBegin(t, m, fmt.Sprintf("short-%d", i), fpA)
	}
	if _, err := m.Begin(context.Background(), "long", fpA, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := m.Len(); got != 101 {
		t.Fatalf("Len = %d, want 101", got)
	}

	// Nobody asks for the expired keys again; the next write after the
	// sweep interval drops them anyway.
	clock.Advance(idempotency.SweepInterval)
	mustBegin(t, m, "trigger", fpA)
	if got := m.Len(); got != 2 {
		t.Errorf("Len after sweep = %d, want 2 (long, trigger)", got)
	}
}

func TestMemoryNilClockUsesWallTime(t *testing.T) {
	t.Parallel()
	m := idempotency.NewMemory(nil)
	claim, err := m.Begin(context.Background(), "k", fpA, 20*time.Millisecond)
	if err != nil || claim.State != ports.ClaimAcquired {
		t.Fatalf("Begin = %+v, %v; want Acquired", claim, err)
	}
	time.Sleep(40 * time.Millisecond)
	if claim, _ := m.Begin(context.Background(), "k", fpB, time.Minute); claim.State != ports.ClaimAcquired {
		t.Errorf("after the lock TTL: state %d, want Acquired", claim.State)
	}
}

// mustBegin claims key for a minute and fails t unless it was free.
func mustBegin(t *testing.T, c ports.IdempotencyCache, key, fp string) {
	t.Helper()
	claim, err := c.Begin(context.Background(), key, fp, time.Minute)
	if err != nil {
		t.Fatalf("Begin(%s): %v", key, err)
	}
	if claim.State != ports.ClaimAcquired {
		t.Fatalf("Begin(%s).State = %d, want Acquired", key, claim.State)
	}
}
