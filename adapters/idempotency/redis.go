package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/ports"
)

var _ ports.IdempotencyCache = (*Redis)(nil)

// beginAttempts bounds Begin's SET NX / GET loop. Another attempt is needed
// only when the key expires or is released between the two commands, so a
// third miss in a row means something else is wrong.
const beginAttempts = 3

// releaseScript deletes KEYS[1] only while it still holds ARGV[1], the exact
// encoding of the caller's in-flight claim. Doing the compare and the delete
// in one script keeps a Complete or a new claim that lands in between from
// being deleted.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0
`)

// extendScript renews KEYS[1]'s expiry to ARGV[2] ms only while it still
// holds ARGV[1], the caller's in-flight claim.
var extendScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
`)

// Redis is an IdempotencyCache in Redis, shared by every quitad process.
// Each key is one string value (see encodeInFlight and encodeDone) with a
// Redis expiry, so Redis Cluster and Sentinel clients work unchanged. It is
// safe for concurrent use.
type Redis struct {
	client redis.Cmdable
	prefix string
}

// NewRedis returns a cache that stores key under prefix+key in client. The
// caller owns client and closes it.
func NewRedis(client redis.Cmdable, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix}
}

// Begin claims key with SET NX PX lockTTL; when the key is taken it reads
// and decodes it. Errors: ErrInvalidTTL when lockTTL < 1ms, Redis errors,
// and a decode error for a value this package did not write.
func (r *Redis) Begin(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (ports.Claim, error) {
	if err := checkTTL(lockTTL); err != nil {
		return ports.Claim{}, err
	}
	k := r.prefix + key
	claim := encodeInFlight(fingerprint)
	for range beginAttempts {
		ok, err := r.client.SetNX(ctx, k, claim, lockTTL).Result()
		if err != nil {
			return ports.Claim{}, fmt.Errorf("idempotency: claim %q: %w", k, err)
		}
		if ok {
			return ports.Claim{State: ports.ClaimAcquired, Fingerprint: fingerprint}, nil
		}
		var get *redis.StringCmd
		var ttl *redis.DurationCmd
		_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			get, ttl = p.Get(ctx, k), p.PTTL(ctx, k)
			return nil
		})
		raw, gerr := get.Bytes()
		if errors.Is(gerr, redis.Nil) {
			continue // expired or released since SET NX: try to claim again
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			return ports.Claim{}, fmt.Errorf("idempotency: read %q: %w", k, err)
		}
		c, err := decode(raw)
		if err != nil {
			return ports.Claim{}, fmt.Errorf("idempotency: read %q: %w", k, err)
		}
		if c.State == ports.ClaimInFlight {
			c.Remaining = max(ttl.Val(), 0) // PTTL's -1/-2 mean no expiry or gone
		}
		return c, nil
	}
	return ports.Claim{}, fmt.Errorf("idempotency: claim %q: key vanished %d times between SET NX and GET", k, beginAttempts)
}

// Complete stores the response for ttl with a plain SET, replacing the
// claim. Errors: ErrInvalidTTL when ttl < 1ms, a status code outside
// 0..65535, and Redis errors.
func (r *Redis) Complete(ctx context.Context, key, fingerprint string, statusCode int, body []byte, ttl time.Duration) error {
	return r.set(ctx, key, ttl, func() ([]byte, error) { return encodeDone(fingerprint, statusCode, body) })
}

// CompleteInRecord marks each key answered for ttl with a plain SET of a
// few bytes, replacing the claim; several go in one pipeline. Errors as
// Complete's; a pipeline that fails may have marked some keys.
func (r *Redis) CompleteInRecord(ctx context.Context, ttl time.Duration, answered ...ports.Answered) error {
	if len(answered) == 1 {
		a := answered[0]
		return r.set(ctx, a.Key, ttl, func() ([]byte, error) { return encodeInRecord(a.Fingerprint, a.StatusCode) })
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	vals := make([][]byte, len(answered))
	for i, a := range answered {
		v, err := encodeInRecord(a.Fingerprint, a.StatusCode)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, a := range answered {
			p.Set(ctx, r.prefix+a.Key, vals[i], ttl)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("idempotency: complete %d keys: %w", len(answered), err)
	}
	return nil
}

// set stores the value encode makes under key for ttl (a completion).
func (r *Redis) set(ctx context.Context, key string, ttl time.Duration, encode func() ([]byte, error)) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	v, err := encode()
	if err != nil {
		return err
	}
	k := r.prefix + key
	if err := r.client.Set(ctx, k, v, ttl).Err(); err != nil {
		return fmt.Errorf("idempotency: complete %q: %w", k, err)
	}
	return nil
}

// Extend renews key's expiry to lockTTL only while it still holds this
// fingerprint's in-flight claim, atomically (a Lua script). Errors:
// ErrInvalidTTL when lockTTL < 1ms, and Redis errors.
func (r *Redis) Extend(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (bool, error) {
	if err := checkTTL(lockTTL); err != nil {
		return false, err
	}
	k := r.prefix + key
	n, err := extendScript.Run(ctx, r.client, []string{k}, encodeInFlight(fingerprint), lockTTL.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("idempotency: extend %q: %w", k, err)
	}
	return n == 1, nil
}

// Release deletes key only while it still holds this fingerprint's
// in-flight claim, atomically (a Lua script). A completed response, another
// fingerprint's claim or a missing key is left as it is. Errors: Redis
// errors.
func (r *Redis) Release(ctx context.Context, key, fingerprint string) error {
	k := r.prefix + key
	if err := releaseScript.Run(ctx, r.client, []string{k}, encodeInFlight(fingerprint)).Err(); err != nil {
		return fmt.Errorf("idempotency: release %q: %w", k, err)
	}
	return nil
}
