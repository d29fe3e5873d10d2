// Package idempotency implements ports.IdempotencyCache, the fast path that
// answers a retried financial write without running it again.
//
// Two implementations keep the same contract: Redis (shared by every quitad
// process) and Memory (one process, for the embedded default without Redis).
// Either may lose entries at any time — a flush, an eviction, a restart — and
// that is safe by design: the durable guarantee is the database's unique
// (account, mode, key) constraint, so callers treat any error here as a cache
// miss and carry on.
//
// A key holds one of two things: an in-flight claim (the fingerprint of the
// request running now, for at most its lock TTL) or a completed response
// (fingerprint, status code and body, for the response TTL, 24 h in
// production). Neither implementation compares fingerprints for the caller:
// Begin reports what it found and the caller decides between a replay, 409
// idempotency_key_reused and 409 idempotency_key_in_use.
//
// A claim carries no token beyond the fingerprint, so Release cannot tell two
// requests with the same fingerprint apart: if a claim outlives its lock TTL
// and an identical retry takes the key, the first request's Release drops the
// retry's claim. At worst that lets a third identical request run too, which
// the database's unique key then stops.
package idempotency

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidTTL is returned by Begin and Complete when the lock or response
// TTL is shorter than a millisecond, the smallest expiry Redis can store. A
// zero TTL would otherwise mean "keep forever" to Redis.
var ErrInvalidTTL = errors.New("idempotency: ttl must be at least 1ms")

func checkTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("%w (got %v)", ErrInvalidTTL, ttl)
	}
	return nil
}
