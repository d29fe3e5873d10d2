package ports

import (
	"context"
	"time"
)

// WorkerLeases lets the processes of one deployment run an exclusive
// worker one at a time: the holder renews its lease on every tick, and
// another process takes the worker over once a lease runs out (its holder
// died or stopped renewing). Leases go by each process's clock, so ttl
// must exceed the clocks' skew.
type WorkerLeases interface {
	// HoldWorkerLease takes or renews name's lease for holder until
	// now+ttl and reports whether holder has it.
	HoldWorkerLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
	// ReleaseWorkerLease ends holder's lease on name, if it has it.
	ReleaseWorkerLease(ctx context.Context, name, holder string) error
}
