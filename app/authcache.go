package app

import (
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// AuthCacheTTL is how long a process may trust an API-key lookup without
// reading the database again. Revocation and rotation wait this long before
// they answer (KeyService), so once such a call completes no process still
// trusts the old key: every entry cached before the revocation committed has
// expired, and every lookup after it reads the revoked row. Zero disables
// the cache (and the wait).
type AuthCacheTTL time.Duration

// DefaultAuthCacheTTL keeps key lookups off the database for all but one
// request per key, process and second, at the price of revoke and rotate
// calls that take a second.
const DefaultAuthCacheTTL = AuthCacheTTL(time.Second)

// authCacheMax bounds the entries; past it the cache is emptied, which
// only costs database lookups.
const authCacheMax = 50_000

type authEntry struct {
	caller Caller
	rec    ports.APIKeyRecord
	until  time.Time
}

// authCache holds successful lookups only: an unknown key is looked up
// every time, so a key issued a moment ago works at once.
type authCache struct {
	ttl time.Duration
	// now is the process's monotonic clock, not the business clock: the
	// guarantee above is about real elapsed time.
	now func() time.Time

	mu sync.RWMutex
	m  map[string]authEntry
}

func newAuthCache(ttl AuthCacheTTL) *authCache {
	return &authCache{ttl: time.Duration(ttl), now: time.Now, m: make(map[string]authEntry)}
}

func (c *authCache) get(fingerprint string) (Caller, ports.APIKeyRecord, bool) {
	if c.ttl <= 0 {
		return Caller{}, ports.APIKeyRecord{}, false
	}
	c.mu.RLock()
	e, ok := c.m[fingerprint]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.until) {
		return Caller{}, ports.APIKeyRecord{}, false
	}
	return e.caller, e.rec, true
}

// put records a lookup that started at started: the entry expires ttl after
// the read began, never later, whatever the read took.
func (c *authCache) put(fingerprint string, caller Caller, rec ports.APIKeyRecord, started time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	if len(c.m) >= authCacheMax {
		c.m = make(map[string]authEntry)
	}
	c.m[fingerprint] = authEntry{caller: caller, rec: rec, until: started.Add(c.ttl)}
	c.mu.Unlock()
}
