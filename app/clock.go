package app

import (
	"crypto/rand"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// SystemClock reads the wall clock in UTC.
type SystemClock struct{}

// Now implements ports.Clock.
func (SystemClock) Now() time.Time { return time.Now().UTC() }

// RandomIDs makes raw ids from crypto/rand.
type RandomIDs struct{}

// NewID implements ports.IDGenerator.
func (RandomIDs) NewID() (string, error) { return domain.NewRawID(rand.Reader) }

var (
	_ ports.Clock       = SystemClock{}
	_ ports.IDGenerator = RandomIDs{}
)
