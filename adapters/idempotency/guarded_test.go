package idempotency_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// A failing cache is tried once per cooldown, not once per request; meanwhile every call answers ErrCacheUnavailable at once.
func TestGuardedSkipsAFailingCache(t *testing.T) {
	t.Parallel()
	hang := &mocks.IdempotencyCacheMock{
		BeginFunc: func(ctx context.Context, _, _ string, _ time.Duration) (ports.Claim, error) {
			<-ctx.Done() // a hanging Redis
			return ports.Claim{}, ctx.Err()
		},
	}
	g := &idempotency.Guarded{Cache: hang, Timeout: 20 * time.Millisecond, Cooldown: 200 * time.Millisecond}
	for i := range 50 {
		if _, err := g.Begin(t.Context(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := len(hang.BeginCalls()); n != 1 {
		t.Fatalf("the hanging cache was called %d times, want 1", n)
	}
	time.Sleep(250 * time.Millisecond)
	_, _ = g.Begin(t.Context(), "k", "fp", time.Second)
	if n := len(hang.BeginCalls()); n != 2 {
		t.Fatalf("after the cooldown the cache was called %d times in all, want 2 (one probe)", n)
	}
}

// A caller that gives up does not open the breaker: that is not the
// cache's fault.
func TestGuardedIgnoresTheCallersCancellation(t *testing.T) {
	t.Parallel()
	ok := &mocks.IdempotencyCacheMock{
		BeginFunc: func(ctx context.Context, _, _ string, _ time.Duration) (ports.Claim, error) {
			return ports.Claim{State: ports.ClaimAcquired}, ctx.Err()
		},
	}
	g := &idempotency.Guarded{Cache: ok}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _ = g.Begin(ctx, "k", "fp", time.Second)
	if c, err := g.Begin(t.Context(), "k", "fp", time.Second); err != nil || c.State != ports.ClaimAcquired {
		t.Fatalf("after a cancelled call: %+v, %v", c, err)
	}
}

// With a real Redis client against a refused port and against a server
// that accepts and never answers, the guard fails fast and then stops
// sending anything. On a plain client the guard's deadline ends the call
// that reached the server; go-redis's autopipelined faces, which the
// server uses (cmd/wiring: hotPath), wait for their batch whatever the
// command's context says, so there the client's read timeout ends it —
// which is why quitad sets it to 200 ms (cmd/wiring: provideRedis).
func TestGuardedRedisRefusedAndHanging(t *testing.T) {
	t.Parallel()
	hanging, accepted := testenv.HangingServer(t)
	faces := []struct {
		name        string
		readTimeout time.Duration
		face        func(*redis.Client) (redis.Cmdable, error)
	}{
		{"client", 10 * time.Second, func(c *redis.Client) (redis.Cmdable, error) { return c, nil }},
		{"blocking", 200 * time.Millisecond, func(c *redis.Client) (redis.Cmdable, error) { return c.AutoPipeline() }},
		{"deferred", 200 * time.Millisecond, func(c *redis.Client) (redis.Cmdable, error) { return c.AsyncAutoPipeline() }},
	}
	for name, addr := range map[string]string{"refused": "127.0.0.1:1", "hanging": hanging} {
		for _, f := range faces {
			t.Run(name+"/"+f.name, func(t *testing.T) {
				client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
					ReadTimeout: f.readTimeout, ContextTimeoutEnabled: true})
				t.Cleanup(func() { client.Close() })
				c, err := f.face(client)
				if err != nil {
					t.Fatal(err)
				}
				g := &idempotency.Guarded{Cache: idempotency.NewRedis(c, "t:"), Timeout: 100 * time.Millisecond}
				start := time.Now()
				for i := range 20 {
					if _, err := g.Begin(t.Context(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) {
						t.Fatalf("call %d: %v", i, err)
					}
				}
				// One call reached the server, and the guard's timeout (or
				// the client's short read timeout) ended it, not a 10 s
				// one; the rest never left.
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("20 calls took %v", d)
				}
			})
		}
	}
	if n := accepted(); n > 2*int64(len(faces)) {
		t.Errorf("the hanging server got %d connections, want at most 2 a face (the probe and its pool)", n)
	}
}

// A call no request waits on (marking answered claims) gets
// BackgroundTimeout: a batch a busy machine keeps past Timeout succeeds and
// leaves the breaker shut for the claims; one past BackgroundTimeout opens
// it, as a claim past Timeout does.
func TestGuardedBackgroundCallsGetTheirOwnBound(t *testing.T) {
	t.Parallel()
	var delay atomic.Int64
	slow := &mocks.IdempotencyCacheMock{
		CompleteInRecordFunc: func(ctx context.Context, _ time.Duration, _ ...ports.Answered) error {
			select {
			case <-time.After(time.Duration(delay.Load())):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{State: ports.ClaimAcquired}, nil
		},
	}
	g := &idempotency.Guarded{Cache: slow, Timeout: 20 * time.Millisecond, BackgroundTimeout: 500 * time.Millisecond, Cooldown: time.Minute}
	delay.Store(int64(100 * time.Millisecond)) // five claims' bound, a fifth of the background's
	if err := g.CompleteInRecord(t.Context(), time.Hour, ports.Answered{Key: "k", Fingerprint: "fp", StatusCode: 201}); err != nil {
		t.Fatalf("a background batch inside its bound: %v", err)
	}
	if c, err := g.Begin(t.Context(), "k2", "fp", time.Second); err != nil || c.State != ports.ClaimAcquired {
		t.Fatalf("a claim after the slow background batch: %+v, %v (the breaker opened)", c, err)
	}
	delay.Store(int64(time.Minute))
	if err := g.CompleteInRecord(t.Context(), time.Hour, ports.Answered{Key: "k", Fingerprint: "fp", StatusCode: 201}); !errors.Is(err, ports.ErrCacheUnavailable) {
		t.Fatalf("a background batch past its bound: %v", err)
	}
	if _, err := g.Begin(t.Context(), "k3", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) {
		t.Fatalf("a claim after a background batch past its bound: %v, want the breaker open", err)
	}
}
