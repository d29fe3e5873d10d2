package ratelimit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/ratelimit"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

func TestMemoryGCRA(t *testing.T) {
	t.Parallel()
	c := testkit.NewClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	m := ratelimit.NewMemory(c.Now)
	ctx := context.Background()
	limit := ports.RateLimit{Rate: 10, Burst: 3, Period: time.Second} // one every 100 ms
	for i, wantRemaining := range []int{2, 1, 0} {
		d, err := m.Allow(ctx, "k", limit)
		if err != nil || !d.Allowed || d.Remaining != wantRemaining {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	d, _ := m.Allow(ctx, "k", limit)
	if d.Allowed || d.RetryAfter != 100*time.Millisecond || d.ResetAfter != 300*time.Millisecond {
		t.Fatalf("over the burst: %+v", d)
	}
	if d, _ := m.Allow(ctx, "other", limit); !d.Allowed {
		t.Fatal("keys share a budget")
	}
	c.Advance(99 * time.Millisecond)
	if d, _ := m.Allow(ctx, "k", limit); d.Allowed {
		t.Fatal("allowed before RetryAfter")
	}
	c.Advance(time.Millisecond)
	if d, _ := m.Allow(ctx, "k", limit); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("after RetryAfter: %+v", d)
	}
	c.Advance(time.Second)
	if d, _ := m.Allow(ctx, "k", limit); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("after a full reset: %+v", d)
	}
}

// The limiter runs on a plain client and on go-redis's autopipeliner, both
// its blocking face and the deferred one the server uses (cmd/wiring:
// hotPath).
func TestRedisGCRA(t *testing.T) {
	t.Parallel()
	url, prefix := testenv.RedisURL(t)
	opts, _ := redis.ParseURL(url)
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	blocking, err := client.AutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	deferred, err := client.AsyncAutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]redis.Cmdable{"client": client, "autopipelined": blocking, "deferred": deferred} {
		t.Run(name, func(t *testing.T) {
			r := ratelimit.NewRedis(c, prefix+name+":")
			limit := ports.RateLimit{Rate: 1, Burst: 2, Period: time.Second}
			ctx := context.Background()
			for i, want := range []bool{true, true, false} {
				d, err := r.Allow(ctx, "k", limit)
				if err != nil || d.Allowed != want {
					t.Fatalf("request %d: %+v %v", i, d, err)
				}
				if !want && (d.RetryAfter <= 0 || d.RetryAfter > time.Second || d.Remaining != 0) {
					t.Fatalf("refusal %+v", d)
				}
			}
		})
	}
}

type failing struct{}

func (failing) Allow(context.Context, string, ports.RateLimit) (ports.RateDecision, error) {
	return ports.RateDecision{}, errors.New("redis down")
}

func TestFallbackUsesSecondaryOnError(t *testing.T) {
	t.Parallel()
	c := testkit.NewClock(time.Now())
	f := &ratelimit.Fallback{Primary: failing{}, Secondary: ratelimit.NewMemory(c.Now)}
	limit := ports.RateLimit{Rate: 1, Burst: 1, Period: time.Second}
	if d, err := f.Allow(context.Background(), "k", limit); err != nil || !d.Allowed {
		t.Fatalf("first: %+v %v", d, err)
	}
	if d, err := f.Allow(context.Background(), "k", limit); err != nil || d.Allowed {
		t.Fatalf("second (still limited in process): %+v %v", d, err)
	}
}

func TestLoginAttempts(t *testing.T) {
	t.Parallel()
	c := testkit.NewClock(time.Now())
	url, prefix := testenv.RedisURL(t)
	opts, _ := redis.ParseURL(url)
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	impls := map[string]ports.LoginAttempts{
		"memory": ratelimit.NewMemoryAttempts(c.Now),
		"redis":  ratelimit.NewRedisAttempts(client, prefix),
	}
	for name, a := range impls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if n, d, err := a.Failures(ctx, "e"); err != nil || n != 0 || d != 0 {
				t.Fatalf("fresh: %d %v %v", n, d, err)
			}
			for i := 1; i <= 3; i++ {
				n, d, err := a.AddFailure(ctx, "e", time.Minute)
				if err != nil || n != i || d <= 0 || d > time.Minute {
					t.Fatalf("failure %d: %d %v %v", i, n, d, err)
				}
			}
			if n, d, err := a.Failures(ctx, "e"); err != nil || n != 3 || d <= 0 {
				t.Fatalf("counted: %d %v %v", n, d, err)
			}
			if err := a.Reset(ctx, "e"); err != nil {
				t.Fatal(err)
			}
			if n, _, _ := a.Failures(ctx, "e"); n != 0 {
				t.Fatalf("after reset: %d", n)
			}
		})
	}
	// The in-process window ends on its clock.
	m := impls["memory"]
	_, _, _ = m.AddFailure(context.Background(), "w", time.Minute)
	c.Advance(time.Minute)
	if n, _, _ := m.Failures(context.Background(), "w"); n != 0 {
		t.Fatalf("after the window: %d", n)
	}
}

// hanging never answers until its caller gives up, like a Redis that
// accepts connections and stalls.
type hanging struct{ calls atomic.Int32 }

func (h *hanging) Allow(ctx context.Context, _ string, _ ports.RateLimit) (ports.RateDecision, error) {
	h.calls.Add(1)
	<-ctx.Done()
	return ports.RateDecision{}, ctx.Err()
}

// A hanging Redis costs one timeout, then the breaker skips it: the
// limiter stays fast and still limits (in process).
// allowRepeatedly asks f for key "k" n times in a row and returns how
// many it allowed and how long the n calls took.
func allowRepeatedly(t *testing.T, f *ratelimit.Fallback, n int, l ports.RateLimit) (allowed int, took time.Duration) {
	t.Helper()
	start := time.Now()
	for range n {
		d, err := f.Allow(context.Background(), "k", l)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		}
	}
	return allowed, time.Since(start)
}

func TestFallbackSkipsAHangingPrimary(t *testing.T) {
	t.Parallel()
	h := &hanging{}
	c := testkit.NewClock(time.Now())
	f := &ratelimit.Fallback{Primary: h, Secondary: ratelimit.NewMemory(c.Now), Timeout: 50 * time.Millisecond, Cooldown: time.Minute}
	limit := ports.RateLimit{Rate: 1, Burst: 5, Period: time.Second}
	allowed, took := allowRepeatedly(t, f, 20, limit)
	if took > 500*time.Millisecond {
		t.Errorf("20 calls took %v with a hanging primary", took)
	}
	if h.calls.Load() != 1 || allowed != 5 {
		t.Fatalf("primary called %d times, %d allowed; want 1 and 5", h.calls.Load(), allowed)
	}
}

// Login counters with Redis refused: answers come from the process at
// once, and they still count.
func TestFallbackAttemptsWithRedisRefused(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { client.Close() })
	c := testkit.NewClock(time.Now())
	f := &ratelimit.FallbackAttempts{Primary: ratelimit.NewRedisAttempts(client, "x:"), Secondary: ratelimit.NewMemoryAttempts(c.Now),
		Timeout: 100 * time.Millisecond}
	ctx := context.Background()
	start := time.Now()
	for i := 1; i <= 20; i++ {
		n, _, err := f.AddFailure(ctx, "k", time.Minute)
		if err != nil || n != i {
			t.Fatalf("failure %d: %d %v", i, n, err)
		}
	}
	if n, _, err := f.Failures(ctx, "k"); err != nil || n != 20 {
		t.Fatalf("failures %d %v", n, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("21 calls took %v with Redis refused", took)
	}
}
