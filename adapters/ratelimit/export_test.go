package ratelimit

import "time"

// SetClock makes r's leases run on now (Redis keeps its own clock).
func SetClock(r *Redis, now func() time.Time) { r.now = now }

// LeaseTTL is how long taken tokens stay spendable.
const LeaseTTL = leaseTTL
