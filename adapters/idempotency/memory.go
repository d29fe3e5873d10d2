package idempotency

import (
	"bytes"
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// DefaultMaxEntries bounds a Memory cache. At a few KB per response body it
// keeps the cache to a few hundred MB at worst; past it the entry written
// longest ago is evicted, which the database's unique key makes safe.
const DefaultMaxEntries = 100_000

// sweepInterval is how often a write scans the whole cache for expired
// entries. Reads drop an expired entry as they meet it; the sweep frees the
// ones nobody asks for again. A scan of DefaultMaxEntries takes about a
// millisecond under the lock, so once a minute is cheap.
const sweepInterval = time.Minute

var _ ports.IdempotencyCache = (*Memory)(nil)

// Memory is an in-process IdempotencyCache: a map under one mutex, with
// entries kept in write order so the oldest can be evicted. It plays Redis's
// part when quitad runs as a single process without Redis. It is safe for
// concurrent use.
type Memory struct {
	clock      func() time.Time
	maxEntries int

	mu        sync.Mutex
	entries   map[string]*memEntry
	order     *list.List // of *memEntry, least recently written first
	lastSweep time.Time
}

type memEntry struct {
	key         string
	done        bool // a completed response; otherwise an in-flight claim
	inRecord    bool // done, the answer in the durable record (CompleteInRecord)
	fingerprint string
	statusCode  int
	body        []byte
	expiresAt   time.Time
	elem        *list.Element
}

// NewMemory returns an empty in-process cache bounded to DefaultMaxEntries.
// clock tells the time for every expiry (nil means time.Now); tests pass a
// clock they move.
func NewMemory(clock func() time.Time) *Memory {
	return newMemory(clock, DefaultMaxEntries)
}

func newMemory(clock func() time.Time, maxEntries int) *Memory {
	if clock == nil {
		clock = time.Now
	}
	if maxEntries < 1 {
		maxEntries = 1
	}
	return &Memory{
		clock:      clock,
		maxEntries: maxEntries,
		entries:    make(map[string]*memEntry),
		order:      list.New(),
		lastSweep:  clock(),
	}
}

// Begin claims key for lockTTL when it is free (or its claim or response
// has expired); otherwise it reports the claim or the cached response. The
// returned body is the caller's own copy. ErrInvalidTTL when lockTTL < 1ms.
func (m *Memory) Begin(_ context.Context, key, fingerprint string, lockTTL time.Duration) (ports.Claim, error) {
	if err := checkTTL(lockTTL); err != nil {
		return ports.Claim{}, err
	}
	now := m.clock()

	m.mu.Lock()
	defer m.mu.Unlock()

	if e := m.live(key, now); e != nil {
		if !e.done {
			return ports.Claim{State: ports.ClaimInFlight, Fingerprint: e.fingerprint, Remaining: e.expiresAt.Sub(now)}, nil
		}
		return ports.Claim{
			State:       ports.ClaimCompleted,
			Fingerprint: e.fingerprint,
			StatusCode:  e.statusCode,
			Body:        bytes.Clone(e.body),
			InRecord:    e.inRecord,
		}, nil
	}
	m.put(&memEntry{key: key, fingerprint: fingerprint, expiresAt: now.Add(lockTTL)}, now)
	return ports.Claim{State: ports.ClaimAcquired, Fingerprint: fingerprint}, nil
}

// Complete stores the response for ttl, replacing whatever the key held. It
// keeps its own copy of body. ErrInvalidTTL when ttl < 1ms.
func (m *Memory) Complete(_ context.Context, key, fingerprint string, statusCode int, body []byte, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	now := m.clock()
	e := &memEntry{
		key:         key,
		done:        true,
		fingerprint: fingerprint,
		statusCode:  statusCode,
		body:        bytes.Clone(body),
		expiresAt:   now.Add(ttl),
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(e, now)
	return nil
}

// CompleteInRecord marks each key answered for ttl, replacing whatever it
// held, with the answer left to the durable record. ErrInvalidTTL when
// ttl < 1ms.
func (m *Memory) CompleteInRecord(_ context.Context, ttl time.Duration, answered ...ports.Answered) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range answered {
		m.put(&memEntry{key: a.Key, done: true, inRecord: true, fingerprint: a.Fingerprint, statusCode: a.StatusCode, expiresAt: now.Add(ttl)}, now)
	}
	return nil
}

// Release drops key only when it holds an unexpired in-flight claim with
// this fingerprint; a completed response or another request's claim stays.
func (m *Memory) Release(_ context.Context, key, fingerprint string) error {
	now := m.clock()

	m.mu.Lock()
	defer m.mu.Unlock()

	if e := m.live(key, now); e != nil && !e.done && e.fingerprint == fingerprint {
		m.remove(e)
	}
	return nil
}

// Extend moves an unexpired in-flight claim of this fingerprint to expire
// lockTTL from now. ErrInvalidTTL when lockTTL < 1ms.
func (m *Memory) Extend(_ context.Context, key, fingerprint string, lockTTL time.Duration) (bool, error) {
	if err := checkTTL(lockTTL); err != nil {
		return false, err
	}
	now := m.clock()

	m.mu.Lock()
	defer m.mu.Unlock()

	e := m.live(key, now)
	if e == nil || e.done || e.fingerprint != fingerprint {
		return false, nil
	}
	e.expiresAt = now.Add(lockTTL)
	return true, nil
}

// live returns key's entry, dropping it when it has expired. Expiry is
// inclusive, as in Redis: an entry written with ttl d is gone at +d.
func (m *Memory) live(key string, now time.Time) *memEntry {
	e, ok := m.entries[key]
	if !ok {
		return nil
	}
	if !now.Before(e.expiresAt) {
		m.remove(e)
		return nil
	}
	return e
}

// put stores e as the most recently written entry, replacing any entry of
// its key, then sweeps and evicts to stay within bounds.
func (m *Memory) put(e *memEntry, now time.Time) {
	if old, ok := m.entries[e.key]; ok {
		m.remove(old)
	}
	e.elem = m.order.PushBack(e)
	m.entries[e.key] = e

	if now.Sub(m.lastSweep) >= sweepInterval {
		m.sweep(now)
	}
	for len(m.entries) > m.maxEntries {
		m.remove(m.order.Front().Value.(*memEntry))
	}
}

func (m *Memory) sweep(now time.Time) {
	m.lastSweep = now
	for el := m.order.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*memEntry); !now.Before(e.expiresAt) {
			m.remove(e)
		}
		el = next
	}
}

func (m *Memory) remove(e *memEntry) {
	m.order.Remove(e.elem)
	delete(m.entries, e.key)
}
