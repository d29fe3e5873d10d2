package exactlyonce

import (
	"errors"
	"time"
)

var (
	// ErrKeyReused: the key was used with a different request.
	ErrKeyReused = errors.New("idempotency key was used with a different request")
	// ErrKeyInUse: a request with this key is still running.
	ErrKeyInUse = errors.New("a request with this idempotency key is in progress")
)

// KeyInUseError is ErrKeyInUse with how long the other request's claim
// lasts unless it is renewed: the earliest a retry can run, if that
// request died.
type KeyInUseError struct {
	Remaining time.Duration
}

func (e *KeyInUseError) Error() string { return ErrKeyInUse.Error() }

// Is makes errors.Is(err, ErrKeyInUse) hold.
func (e *KeyInUseError) Is(target error) bool { return target == ErrKeyInUse }
