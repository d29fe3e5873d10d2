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
	c      *redis.Client
	prefix string
}

var _ ports.LoginAttempts = (*RedisAttempts)(nil)

// NewRedisAttempts returns Redis counters namespaced with prefix.
func NewRedisAttempts(c *redis.Client, prefix string) *RedisAttempts {
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
// of switching it off.
type FallbackAttempts struct {
	Primary, Secondary ports.LoginAttempts
}

var _ ports.LoginAttempts = FallbackAttempts{}

// Failures implements ports.LoginAttempts.
func (f FallbackAttempts) Failures(ctx context.Context, key string) (int, time.Duration, error) {
	if n, d, err := f.Primary.Failures(ctx, key); err == nil {
		return n, d, nil
	}
	return f.Secondary.Failures(ctx, key)
}

// AddFailure implements ports.LoginAttempts.
func (f FallbackAttempts) AddFailure(ctx context.Context, key string, window time.Duration) (int, time.Duration, error) {
	if n, d, err := f.Primary.AddFailure(ctx, key, window); err == nil {
		return n, d, nil
	}
	return f.Secondary.AddFailure(ctx, key, window)
}

// Reset implements ports.LoginAttempts.
func (f FallbackAttempts) Reset(ctx context.Context, key string) error {
	err := f.Primary.Reset(ctx, key)
	if err2 := f.Secondary.Reset(ctx, key); err == nil {
		return nil
	} else if err2 != nil {
		return err2
	}
	return nil
}
