package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/ports"
)

// MemoryAttempts counts failed logins in process, in fixed windows on an
// injected clock.
type MemoryAttempts struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]attemptWindow
}

type attemptWindow struct {
	n     int
	until time.Time
}

var _ ports.LoginAttempts = (*MemoryAttempts)(nil)

// NewMemoryAttempts returns in-process counters.
func NewMemoryAttempts(now func() time.Time) *MemoryAttempts {
	return &MemoryAttempts{now: now, m: map[string]attemptWindow{}}
}

// Failures implements ports.LoginAttempts.
func (a *MemoryAttempts) Failures(_ context.Context, key string) (int, time.Duration, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, ok := a.m[key]
	now := a.now()
	if !ok || !now.Before(w.until) {
		return 0, 0, nil
	}
	return w.n, w.until.Sub(now), nil
}

// AddFailure implements ports.LoginAttempts.
func (a *MemoryAttempts) AddFailure(_ context.Context, key string, window time.Duration) (int, time.Duration, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	w, ok := a.m[key]
	if !ok || !now.Before(w.until) {
		if len(a.m) > 100_000 {
			for k, v := range a.m {
				if !now.Before(v.until) {
					delete(a.m, k)
				}
			}
		}
		w = attemptWindow{until: now.Add(window)}
	}
	w.n++
	a.m[key] = w
	return w.n, w.until.Sub(now), nil
}

// Reset implements ports.LoginAttempts.
func (a *MemoryAttempts) Reset(_ context.Context, key string) error {
	a.mu.Lock()
	delete(a.m, key)
	a.mu.Unlock()
	return nil
}

// RedisAttempts counts failed logins in Redis, shared by every process.
type RedisAttempts struct {
	c      redis.UniversalClient
	prefix string
}

var _ ports.LoginAttempts = (*RedisAttempts)(nil)

// NewRedisAttempts returns Redis counters namespaced with prefix.
func NewRedisAttempts(c redis.UniversalClient, prefix string) *RedisAttempts {
	return &RedisAttempts{c: c, prefix: prefix + "login:"}
}

// Failures implements ports.LoginAttempts.
func (a *RedisAttempts) Failures(ctx context.Context, key string) (int, time.Duration, error) {
	pipe := a.c.Pipeline()
	get := pipe.Get(ctx, a.prefix+key)
	ttl := pipe.PTTL(ctx, a.prefix+key)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return 0, 0, err
	}
	n, err := get.Int()
	if err == redis.Nil {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return n, max(ttl.Val(), 0), nil
}

// AddFailure implements ports.LoginAttempts.
func (a *RedisAttempts) AddFailure(ctx context.Context, key string, window time.Duration) (int, time.Duration, error) {
	pipe := a.c.TxPipeline()
	incr := pipe.Incr(ctx, a.prefix+key)
	pipe.ExpireNX(ctx, a.prefix+key, window)
	ttl := pipe.PTTL(ctx, a.prefix+key)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, err
	}
	return int(incr.Val()), max(ttl.Val(), 0), nil
}

// Reset implements ports.LoginAttempts.
func (a *RedisAttempts) Reset(ctx context.Context, key string) error {
	return a.c.Del(ctx, a.prefix+key).Err()
}

// FallbackAttempts uses Primary (Redis) and, while it fails, Secondary (in
// process), so a Redis outage weakens the throttle to per process instead
// of switching it off. Each Primary call is bounded by Timeout (default
// 200 ms), and after a failure Primary is skipped for Cooldown (default
// 5 s), so a refused or hanging Redis costs a login one timeout at most
// per cooldown rather than one per call.
type FallbackAttempts struct {
	Primary, Secondary ports.LoginAttempts
	Timeout, Cooldown  time.Duration

	breaker breaker
}

var _ ports.LoginAttempts = (*FallbackAttempts)(nil)

// Failures implements ports.LoginAttempts.
func (f *FallbackAttempts) Failures(ctx context.Context, key string) (int, time.Duration, error) {
	if f.breaker.closed() {
		pctx, cancel := context.WithTimeout(ctx, orDefault(f.Timeout, defaultTimeout))
		n, d, err := f.Primary.Failures(pctx, key)
		cancel()
		if err == nil {
			return n, d, nil
		}
		f.breaker.trip(orDefault(f.Cooldown, defaultCooldown))
	}
	return f.Secondary.Failures(ctx, key)
}

// AddFailure implements ports.LoginAttempts.
func (f *FallbackAttempts) AddFailure(ctx context.Context, key string, window time.Duration) (int, time.Duration, error) {
	if f.breaker.closed() {
		pctx, cancel := context.WithTimeout(ctx, orDefault(f.Timeout, defaultTimeout))
		n, d, err := f.Primary.AddFailure(pctx, key, window)
		cancel()
		if err == nil {
			return n, d, nil
		}
		f.breaker.trip(orDefault(f.Cooldown, defaultCooldown))
	}
	return f.Secondary.AddFailure(ctx, key, window)
}

// Reset implements ports.LoginAttempts: both stores forget the key.
func (f *FallbackAttempts) Reset(ctx context.Context, key string) error {
	err2 := f.Secondary.Reset(ctx, key)
	if !f.breaker.closed() {
		return err2
	}
	pctx, cancel := context.WithTimeout(ctx, orDefault(f.Timeout, defaultTimeout))
	defer cancel()
	if err := f.Primary.Reset(pctx, key); err != nil {
		f.breaker.trip(orDefault(f.Cooldown, defaultCooldown))
	}
	return err2
}

const (
	defaultTimeout  = 200 * time.Millisecond
	defaultCooldown = 5 * time.Second
)

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// breaker skips a failing primary for a cooldown (wall clock: it measures
// Redis trouble, not the injected business clock).
type breaker struct {
	mu        sync.Mutex
	openUntil time.Time
}

func (b *breaker) closed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !time.Now().Before(b.openUntil)
}

func (b *breaker) trip(cooldown time.Duration) {
	b.mu.Lock()
	b.openUntil = time.Now().Add(cooldown)
	b.mu.Unlock()
}
