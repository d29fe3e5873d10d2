package ratelimit

import (
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// A busy key's process takes its tokens from the shared bucket a few at a
// time: one Redis call for several requests, where the GCRA
// script is most of Redis's work per request. Tokens are counted against
// the bucket when taken, so the processes together never admit more than
// the limit; a token a process still holds when its lease ends is dropped
// unused, so the price is under-admission of at most a lease per process
// and key every leaseTTL, and only for a key busy enough to lease.
//
// The lease size adapts per key: it starts at one token (every request
// asks Redis, exactly as without leases), doubles when a lease runs out
// before it ends, halves when one ends with tokens left, and is capped at
// what the limit grants in leaseTTL (and a quarter of the burst, and
// maxLease). A key of the default 100/s leases at most 5 tokens; a key
// well below its limit's rate keeps asking one at a time.
const (
	leaseTTL = 50 * time.Millisecond
	maxLease = 32
	// maxLeaseKeys bounds the map; past it, ended leases are forgotten.
	maxLeaseKeys = 100_000
)

type leases struct {
	mu sync.Mutex
	m  map[string]*lease
}

type lease struct {
	tokens int       // taken from the bucket and not yet spent
	until  time.Time // the tokens still held then are dropped
	size   int       // how many the next call to the bucket asks for
	grew   bool      // size already doubled for the current lease
	// The bucket as the call that took the tokens saw it.
	remaining int
	reset     time.Time
}

// leaseCap is the most tokens one call takes for key's limit l.
func leaseCap(l ports.RateLimit) int {
	perTTL := int(int64(l.Rate) * int64(leaseTTL) / int64(l.Period))
	return max(1, min(perTTL, l.Burst/4, maxLease))
}

// take spends a token key holds, or says how many to ask the bucket for.
func (ls *leases) take(key string, l ports.RateLimit, now time.Time) (d ports.RateDecision, ok bool, ask int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	st := ls.m[key]
	if st == nil {
		if ls.m == nil {
			ls.m = map[string]*lease{}
		}
		if len(ls.m) >= maxLeaseKeys {
			ls.prune(now)
		}
		st = &lease{size: 1}
		ls.m[key] = st
	}
	live := now.Before(st.until)
	switch {
	case st.tokens > 0 && live:
		st.tokens--
		return ports.RateDecision{Allowed: true, Remaining: st.remaining + st.tokens, ResetAfter: max(st.reset.Sub(now), 0)}, true, 0
	case st.tokens > 0: // ended with tokens left: lease less
		st.tokens = 0
		st.size = max(1, st.size/2)
	case live && !st.grew: // ran out before it ended: lease more
		st.grew = true
		st.size *= 2
	}
	st.size = min(st.size, leaseCap(l))
	return ports.RateDecision{}, false, st.size
}

// add keeps the n tokens a call took beyond the one its caller spends.
func (ls *leases) add(key string, n int, remaining int, resetAfter time.Duration, now time.Time) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	st := ls.m[key]
	if st == nil {
		return // pruned meanwhile: the tokens are dropped, never overspent
	}
	if !now.Before(st.until) {
		st.tokens = 0
	}
	st.tokens += n
	st.until = now.Add(leaseTTL)
	st.grew = false
	st.remaining = remaining
	st.reset = now.Add(resetAfter)
}

func (ls *leases) prune(now time.Time) {
	for k, st := range ls.m {
		if !now.Before(st.until) {
			delete(ls.m, k)
		}
	}
}
