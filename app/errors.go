package app

import (
	"errors"

	"github.com/quitapix/quita/app/exactlyonce"
)

var (
	// ErrIdempotencyKeyReused: the key was used with a different request.
	ErrIdempotencyKeyReused = exactlyonce.ErrKeyReused
	// ErrIdempotencyKeyInUse: a request with this key is still running.
	ErrIdempotencyKeyInUse = exactlyonce.ErrKeyInUse
	// ErrTestModeOnly: a test helper was called with a live key. Callers
	// answer it as not found, so live mode does not reveal the helpers.
	ErrTestModeOnly = errors.New("test helpers need a test key")
	// ErrDueDateNotSupported: the acquirer that serves the caller's mode
	// cannot open due-date charges (ports.DueDateSupport). Create returns
	// it after validating the request and before any acquirer call.
	ErrDueDateNotSupported = errors.New("the acquirer does not support due-date charges")
)

// KeyInUseError is ErrIdempotencyKeyInUse with how long the other
// request's claim lasts (exactlyonce.KeyInUseError).
type KeyInUseError = exactlyonce.KeyInUseError
