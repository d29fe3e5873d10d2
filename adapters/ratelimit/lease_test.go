package ratelimit_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/ratelimit"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// scriptCounter counts the limiter's script calls, one per Redis decision.
type scriptCounter struct{ n atomic.Int64 }

func (*scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.HasPrefix(cmd.Name(), "eval") {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (*scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func countedClient(t *testing.T) (*redis.Client, *scriptCounter, string) {
	t.Helper()
	url, prefix := testenv.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	c := &scriptCounter{}
	client.AddHook(c)
	return client, c, prefix
}

// A key used now and then asks Redis on every request, exactly as without
// leases; a busy one asks once for many.
func TestRedisLeasesOnlyForABusyKey(t *testing.T) {
	t.Parallel()
	client, calls, prefix := countedClient(t)
	ctx := context.Background()
	limit := ports.RateLimit{Rate: 1000, Burst: 1000, Period: time.Second}

	quiet := ratelimit.NewRedis(client, prefix+"quiet:")
	clock := testkit.NewClock(time.Now())
	ratelimit.SetClock(quiet, clock.Now)
	for i := range 20 {
		d, err := quiet.Allow(ctx, "k", limit)
		if err != nil || !d.Allowed {
			t.Fatalf("quiet request %d: %+v %v", i, d, err)
		}
		clock.Advance(ratelimit.LeaseTTL + time.Millisecond)
	}
	if got := calls.n.Load(); got != 20 {
		t.Fatalf("a key used once a lease asked Redis %d times for 20 requests, want 20", got)
	}

	calls.n.Store(0)
	busy := ratelimit.NewRedis(client, prefix+"busy:")
	big := ports.RateLimit{Rate: 1_000_000, Burst: 1_000_000, Period: time.Second}
	for i := range 1000 {
		d, err := busy.Allow(ctx, "k", big)
		if err != nil || !d.Allowed || d.Remaining < 0 || d.Remaining > big.Burst {
			t.Fatalf("busy request %d: %+v %v", i, d, err)
		}
	}
	if got := calls.n.Load(); got > 100 {
		t.Fatalf("a busy key asked Redis %d times for 1000 requests, want leases (≤ 100)", got)
	}

	// Tokens still held when their lease ends are not spent.
	held := ratelimit.NewRedis(client, prefix+"held:")
	hclock := testkit.NewClock(time.Now())
	ratelimit.SetClock(held, hclock.Now)
	for range 100 {
		if d, err := held.Allow(ctx, "k", big); err != nil || !d.Allowed {
			t.Fatalf("%+v %v", d, err)
		}
	}
	hclock.Advance(ratelimit.LeaseTTL)
	calls.n.Store(0)
	if d, err := held.Allow(ctx, "k", big); err != nil || !d.Allowed {
		t.Fatalf("%+v %v", d, err)
	}
	if got := calls.n.Load(); got != 1 {
		t.Fatalf("the request after the lease ended asked Redis %d times, want 1", got)
	}
}

// Two processes hammering one key never admit more than the bucket
// allows — leased tokens are counted when taken — and drop little.
func TestRedisLeasesStayWithinTheLimit(t *testing.T) {
	t.Parallel()
	client, _, prefix := countedClient(t)
	ctx := context.Background()
	limit := ports.RateLimit{Rate: 400, Burst: 40, Period: time.Second}
	procs := []*ratelimit.Redis{ratelimit.NewRedis(client, prefix), ratelimit.NewRedis(client, prefix)}

	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(600 * time.Millisecond)
	for i := range 8 {
		wg.Go(func() {
			p := procs[i%2]
			for time.Now().Before(stop) {
				d, err := p.Allow(ctx, "k", limit)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	// GCRA admits at most the burst plus the rate over the time.
	most := int64(limit.Burst) + int64(float64(limit.Rate)*elapsed.Seconds()) + 1
	got := admitted.Load()
	if got > most {
		t.Fatalf("admitted %d in %v, the limit allows at most %d", got, elapsed, most)
	}
	if got < most*8/10 {
		t.Fatalf("admitted %d in %v of the %d allowed: leases dropped too many", got, elapsed, most)
	}
}

// deadlineCounter counts the deadlines set up under it: context.WithTimeout
// asks its parent's Deadline once.
type deadlineCounter struct {
	context.Context
	n atomic.Int64
}

func (c *deadlineCounter) Deadline() (time.Time, bool) {
	c.n.Add(1)
	return c.Context.Deadline()
}

// Behind Fallback, a busy key's requests answered from a lease set up no
// deadline (a timer each): only the calls that go to Redis get one, and
// the answers are the Redis limiter's.
func TestFallbackBoundsOnlyTheCallsToRedis(t *testing.T) {
	t.Parallel()
	client, calls, prefix := countedClient(t)
	f := &ratelimit.Fallback{Primary: ratelimit.NewRedis(client, prefix), Secondary: ratelimit.NewMemory(time.Now)}
	ctx := &deadlineCounter{Context: context.Background()}
	big := ports.RateLimit{Rate: 1_000_000, Burst: 1_000_000, Period: time.Second}
	for i := range 1000 {
		if d, err := f.Allow(ctx, "k", big); err != nil || !d.Allowed {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	if got, want := ctx.n.Load(), calls.n.Load(); got != want || want > 100 {
		t.Fatalf("%d deadlines for %d calls to Redis in 1000 requests; want one a call, and leases (≤ 100 calls)", got, want)
	}
	// A tight limit still refuses through Fallback, as the limiter alone does.
	tight := ports.RateLimit{Rate: 1, Burst: 2, Period: time.Second}
	for i, want := range []bool{true, true, false} {
		if d, err := f.Allow(ctx, "tight", tight); err != nil || d.Allowed != want {
			t.Fatalf("tight request %d: %+v %v, want allowed %v", i, d, err, want)
		}
	}
}

// A Redis limiter behind Fallback whose Redis accepts and never answers:
// its call is still bounded by Fallback's Timeout, and the process limits
// alone through the cooldown.
func TestFallbackBoundsAHangingRedisLimiter(t *testing.T) {
	t.Parallel()
	addr, _ := testenv.HangingServer(t)
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { client.Close() })
	f := &ratelimit.Fallback{Primary: ratelimit.NewRedis(client, "hang:"), Secondary: ratelimit.NewMemory(time.Now),
		Timeout: 50 * time.Millisecond, Cooldown: time.Minute}
	limit := ports.RateLimit{Rate: 1, Burst: 3, Period: time.Second}
	allowed, took := allowRepeatedly(t, f, 10, limit)
	if took > 2*time.Second {
		t.Errorf("10 requests took %v against a hanging Redis; want the first bounded by the 50 ms timeout", took)
	}
	if allowed != 3 {
		t.Errorf("%d of 10 allowed, want the process's burst of 3", allowed)
	}
}
