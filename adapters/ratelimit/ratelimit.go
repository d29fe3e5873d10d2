// Package ratelimit holds Quita's limiters: GCRA per API key in Redis
// (go-redis/redis_rate) with an in-process GCRA that takes over when Redis
// is absent or failing, and the failed-login counters of the dashboard.
package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/ports"
)

// Memory is an in-process GCRA limiter on an injected clock. Its state is
// per process: with several processes and no Redis each allows the limit.
type Memory struct {
	now func() time.Time
	mu  sync.Mutex
	tat map[string]time.Time
	// maxKeys bounds the map; past it, keys whose TAT is in the past (a
	// full burst available, so forgetting them changes nothing) are pruned.
	maxKeys int
}

var _ ports.RateLimiter = (*Memory)(nil)

// NewMemory returns an in-process limiter.
func NewMemory(now func() time.Time) *Memory {
	return &Memory{now: now, tat: map[string]time.Time{}, maxKeys: 100_000}
}

// Allow implements ports.RateLimiter with the generic cell rate algorithm:
// each event pushes the key's theoretical arrival time (TAT) by one
// emission interval; an event is allowed while the TAT stays within the
// burst tolerance of now.
func (m *Memory) Allow(_ context.Context, key string, l ports.RateLimit) (ports.RateDecision, error) {
	if l.Rate <= 0 || l.Period <= 0 {
		return ports.RateDecision{Allowed: true, Remaining: l.Burst}, nil
	}
	interval := l.Period / time.Duration(l.Rate)
	tolerance := interval * time.Duration(max(l.Burst, 1))
	now := m.now()

	m.mu.Lock()
	defer m.mu.Unlock()
	tat, ok := m.tat[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	allowAt := next.Add(-tolerance)
	if now.Before(allowAt) {
		return ports.RateDecision{Allowed: false, Remaining: 0, RetryAfter: allowAt.Sub(now), ResetAfter: tat.Sub(now)}, nil
	}
	if !ok && len(m.tat) >= m.maxKeys {
		m.prune(now)
	}
	m.tat[key] = next
	return ports.RateDecision{Allowed: true, Remaining: int(now.Sub(allowAt) / interval), ResetAfter: next.Sub(now)}, nil
}

func (m *Memory) prune(now time.Time) {
	for k, t := range m.tat {
		if !t.After(now) {
			delete(m.tat, k)
		}
	}
}

// Redis is a GCRA limiter shared by every process (redis_rate runs the
// algorithm in a Lua script on Redis's clock). A key busy in this process
// takes its tokens a few at a time (lease.go).
type Redis struct {
	l      *redis_rate.Limiter
	prefix string
	now    func() time.Time
	leases leases
}

var _ ports.RateLimiter = (*Redis)(nil)

// NewRedis returns a Redis limiter; keys are namespaced with prefix.
func NewRedis(client redis.Cmdable, prefix string) *Redis {
	return &Redis{l: redis_rate.NewLimiter(client), prefix: prefix, now: time.Now}
}

// Allow implements ports.RateLimiter: from a token this process holds for
// key, else from the bucket in Redis (taking a few ahead for a busy key).
func (r *Redis) Allow(ctx context.Context, key string, l ports.RateLimit) (ports.RateDecision, error) {
	d, ok, ask := r.local(key, l)
	if ok {
		return d, nil
	}
	return r.bucket(ctx, key, l, ask)
}

// local answers from a token this process holds for key (or for a limit
// that limits nothing) without a call to Redis; otherwise it says how many
// tokens to ask the bucket for.
func (r *Redis) local(key string, l ports.RateLimit) (d ports.RateDecision, ok bool, ask int) {
	if l.Rate <= 0 || l.Period <= 0 {
		return ports.RateDecision{Allowed: true, Remaining: l.Burst}, true, 0
	}
	return r.leases.take(key, l, r.now())
}

// bucket takes ask tokens (one spent now, the rest held) from key's bucket
// in Redis.
func (r *Redis) bucket(ctx context.Context, key string, l ports.RateLimit, ask int) (ports.RateDecision, error) {
	limit := redis_rate.Limit{Rate: l.Rate, Burst: max(l.Burst, 1), Period: l.Period}
	var res *redis_rate.Result
	var err error
	if ask > 1 {
		res, err = r.l.AllowAtMost(ctx, r.prefix+"rl:"+key, limit, ask)
	} else {
		res, err = r.l.Allow(ctx, r.prefix+"rl:"+key, limit)
	}
	if err != nil {
		return ports.RateDecision{}, err
	}
	if res.Allowed <= 0 {
		return ports.RateDecision{Remaining: 0, RetryAfter: max(res.RetryAfter, 0), ResetAfter: max(res.ResetAfter, 0)}, nil
	}
	held := res.Allowed - 1
	r.leases.add(key, held, res.Remaining, res.ResetAfter, r.now())
	return ports.RateDecision{Allowed: true, Remaining: res.Remaining + held, ResetAfter: max(res.ResetAfter, 0)}, nil
}

// Fallback asks Primary and, when it fails, Secondary: Redis trouble turns
// the shared limit into a per-process one instead of failing requests.
// After a failure Primary is skipped for Cooldown (default 5 s), so a
// refused or hanging Redis costs one Timeout per cooldown, not per request.
type Fallback struct {
	Primary, Secondary ports.RateLimiter
	Log                *slog.Logger
	// Timeout bounds a Primary call (default 200 ms) so a hung Redis does
	// not hold requests.
	Timeout  time.Duration
	Cooldown time.Duration

	warned  sync.Once
	breaker breaker
}

var _ ports.RateLimiter = (*Fallback)(nil)

// Allow implements ports.RateLimiter.
func (f *Fallback) Allow(ctx context.Context, key string, l ports.RateLimit) (ports.RateDecision, error) {
	if f.breaker.closed() {
		d, err := f.primary(ctx, key, l)
		if err == nil {
			return d, nil
		}
		f.breaker.trip(orDefault(f.Cooldown, defaultCooldown))
		if f.Log != nil {
			f.warned.Do(func() {
				f.Log.WarnContext(ctx, "rate limiter: redis failed, limiting in process", "err", err)
			})
		}
	}
	return f.Secondary.Allow(ctx, key, l)
}

// primary asks Primary within Timeout. The Redis limiter answers from a
// token this process holds without calling Redis, so the deadline (a
// timer) is set up only for a call that goes to Redis: most of a busy
// key's requests make none.
func (f *Fallback) primary(ctx context.Context, key string, l ports.RateLimit) (ports.RateDecision, error) {
	r, leased := f.Primary.(*Redis)
	ask := 0
	if leased {
		d, ok, n := r.local(key, l)
		if ok {
			return d, nil
		}
		ask = n
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(f.Timeout, defaultTimeout))
	defer cancel()
	if leased {
		return r.bucket(ctx, key, l, ask)
	}
	return f.Primary.Allow(ctx, key, l)
}
