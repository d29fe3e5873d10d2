package app

import "errors"

var (
	// ErrIdempotencyKeyReused: the key was used with a different request.
	ErrIdempotencyKeyReused = errors.New("idempotency key was used with a different request")
	// ErrIdempotencyKeyInUse: a request with this key is still running.
	ErrIdempotencyKeyInUse = errors.New("a request with this idempotency key is in progress")
	// ErrTestModeOnly: a test helper was called with a live key. Callers
	// answer it as not found, so live mode does not reveal the helpers.
	ErrTestModeOnly = errors.New("test helpers need a test key")
)
