package idempotency

import "time"

// NewMemoryWithLimit is NewMemory with a smaller bound, so eviction can be
// tested without 100k entries.
func NewMemoryWithLimit(clock func() time.Time, maxEntries int) *Memory {
	return newMemory(clock, maxEntries)
}

// Len counts the entries m holds, expired ones not yet swept included.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// The Redis value format, for the codec tests.
var (
	EncodeInFlight = encodeInFlight
	EncodeDone     = encodeDone
	Decode         = decode
	EncodeInRecord = encodeInRecord
)

// SweepInterval is how often a write sweeps expired entries.
const SweepInterval = sweepInterval
