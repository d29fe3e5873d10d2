package app

import (
	"errors"
	"time"
)

var (
	// ErrIdempotencyKeyReused: the key was used with a different request.
	ErrIdempotencyKeyReused = errors.New("idempotency key was used with a different request")
	// ErrIdempotencyKeyInUse: a request with this key is still running.
	ErrIdempotencyKeyInUse = errors.New("a request with this idempotency key is in progress")
	// ErrTestModeOnly: a test helper was called with a live key. Callers
	// answer it as not found, so live mode does not reveal the helpers.
	ErrTestModeOnly = errors.New("test helpers need a test key")
)

// KeyInUseError is ErrIdempotencyKeyInUse with how long the other
// request's claim lasts unless it is renewed: the earliest a retry can
// run, if that request died.
type KeyInUseError struct {
	Remaining time.Duration
}

func (e *KeyInUseError) Error() string { return ErrIdempotencyKeyInUse.Error() }

// Is makes errors.Is(err, ErrIdempotencyKeyInUse) hold.
func (e *KeyInUseError) Is(target error) bool { return target == ErrIdempotencyKeyInUse }
