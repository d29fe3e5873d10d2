package idempotency

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// Guarded puts a circuit breaker in front of a shared cache (Redis): each
// call gets at most Timeout, and after a failure the cache is skipped for
// Cooldown — every call answers ports.ErrCacheUnavailable at once, and the
// caller takes the database path — so a refused or hanging Redis costs one
// timeout per cooldown instead of one per request. It logs once per trip.
type Guarded struct {
	Cache ports.IdempotencyCache
	Log   *slog.Logger
	// Timeout bounds one call (default 200 ms).
	Timeout time.Duration
	// BackgroundTimeout bounds one call no request waits on — marking
	// answered claims (CompleteInRecord) and dropping cob intents
	// (RedisIntents.DropCobIntent), batches of concurrent requests' writes
	// (default 1 s). A busy machine can keep such a batch past Timeout
	// without anything being wrong with Redis, and held to Timeout it
	// would open the breaker and send every create to the database for a
	// cooldown. A call past BackgroundTimeout, or one that fails, opens it.
	BackgroundTimeout time.Duration
	// Cooldown is how long the cache is skipped after a failure (default
	// 5 s); the first call after it probes the cache again.
	Cooldown time.Duration

	mu        sync.Mutex
	openUntil time.Time // wall clock: it measures Redis trouble
}

var _ ports.IdempotencyCache = (*Guarded)(nil)

const (
	defaultGuardTimeout           = 200 * time.Millisecond
	defaultGuardBackgroundTimeout = time.Second
	defaultGuardCooldown          = 5 * time.Second
)

// skipping reports whether the breaker is open: calls answer
// ErrCacheUnavailable without reaching the cache.
func (g *Guarded) skipping() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return time.Now().Before(g.openUntil)
}

// call runs fn, a call a request waits on, under the breaker.
func (g *Guarded) call(ctx context.Context, fn func(context.Context) error) error {
	return g.within(ctx, cmp.Or(g.Timeout, defaultGuardTimeout), fn)
}

// background runs fn, a call no request waits on, under the breaker.
func (g *Guarded) background(ctx context.Context, fn func(context.Context) error) error {
	return g.within(ctx, cmp.Or(g.BackgroundTimeout, defaultGuardBackgroundTimeout), fn)
}

// within runs fn under the breaker, for at most timeout.
func (g *Guarded) within(ctx context.Context, timeout time.Duration, fn func(context.Context) error) error {
	if g.skipping() {
		return ports.ErrCacheUnavailable
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := fn(cctx)
	if err == nil || ctx.Err() != nil {
		return err // success, or the caller gave up: not the cache's fault
	}
	cooldown := g.Cooldown
	if cooldown <= 0 {
		cooldown = defaultGuardCooldown
	}
	g.mu.Lock()
	tripped := !time.Now().Before(g.openUntil)
	g.openUntil = time.Now().Add(cooldown)
	g.mu.Unlock()
	if tripped && g.Log != nil {
		g.Log.WarnContext(ctx, "idempotency cache failed; using the database alone", "cooldown", cooldown, "err", err)
	}
	return fmt.Errorf("%w: %w", ports.ErrCacheUnavailable, err)
}

// Begin implements ports.IdempotencyCache.
func (g *Guarded) Begin(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (ports.Claim, error) {
	var c ports.Claim
	err := g.call(ctx, func(ctx context.Context) (err error) {
		c, err = g.Cache.Begin(ctx, key, fingerprint, lockTTL)
		return err
	})
	return c, err
}

// Complete implements ports.IdempotencyCache.
func (g *Guarded) Complete(ctx context.Context, key, fingerprint string, statusCode int, body []byte, ttl time.Duration) error {
	return g.call(ctx, func(ctx context.Context) error {
		return g.Cache.Complete(ctx, key, fingerprint, statusCode, body, ttl)
	})
}

// CompleteInRecord implements ports.IdempotencyCache.
func (g *Guarded) CompleteInRecord(ctx context.Context, ttl time.Duration, answered ...ports.Answered) error {
	return g.background(ctx, func(ctx context.Context) error {
		return g.Cache.CompleteInRecord(ctx, ttl, answered...)
	})
}

// Release implements ports.IdempotencyCache.
func (g *Guarded) Release(ctx context.Context, key, fingerprint string) error {
	return g.call(ctx, func(ctx context.Context) error { return g.Cache.Release(ctx, key, fingerprint) })
}

// Extend implements ports.IdempotencyCache.
func (g *Guarded) Extend(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (bool, error) {
	var ok bool
	err := g.call(ctx, func(ctx context.Context) (err error) {
		ok, err = g.Cache.Extend(ctx, key, fingerprint, lockTTL)
		return err
	})
	return ok, err
}
