package testkit

import (
	"sync"
	"time"
)

// Clock is a clock tests move forward by hand (it satisfies ports.Clock).
// Frozen at a start time, it reads the same until Advance; started at the
// zero time it follows the wall clock plus what Advance added, so a server
// under test keeps running while a test skips an hour.
type Clock struct {
	mu     sync.Mutex
	start  time.Time
	offset time.Duration
}

// NewClock returns a clock frozen at start, or following the wall clock
// (in UTC) when start is the zero time.
func NewClock(start time.Time) *Clock { return &Clock{start: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.start
	if base.IsZero() {
		base = time.Now().UTC()
	}
	return base.Add(c.offset)
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
