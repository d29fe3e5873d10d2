package exactlyonce

import (
	"context"
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// RenewClaim extends a claim on ckey in cache to lockTTL every renewEvery
// until stop is called, so the claim can stay short: a request killed with
// its process frees the key within lockTTL, while a slow one (a slow
// acquirer) keeps it. stop returns once renewal has ended, so no renewal
// runs after the claim is completed or released, and it may be called
// more than once. Renewal is a timer, not a goroutine: nearly every
// request ends before the first tick, and then costs no goroutine, ticker
// or context. Every write that claims an idempotency key uses
// it (the money writes here, the other POSTs in the HTTP layer).
func RenewClaim(ctx context.Context, cache ports.IdempotencyCache, ckey, fingerprint string, lockTTL, renewEvery time.Duration) (stop func()) {
	r := &claimRenewal{}
	r.mu.Lock() // the first tick reads r.timer
	defer r.mu.Unlock()
	r.timer = time.AfterFunc(renewEvery, func() {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return
		}
		if r.ctx == nil {
			r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
		}
		r.running.Add(1)
		r.mu.Unlock()
		defer r.running.Done()
		if ok, err := cache.Extend(r.ctx, ckey, fingerprint, lockTTL); err != nil || !ok {
			return // the cache lost it (a money write's key is still guarded by the database)
		}
		r.mu.Lock()
		if !r.stopped {
			r.timer.Reset(renewEvery)
		}
		r.mu.Unlock()
	})
	return r.stop
}

// claimRenewal is one request's renewal timer (RenewClaim).
type claimRenewal struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	ctx     context.Context // made at the first renewal
	cancel  context.CancelFunc
	running sync.WaitGroup // a renewal under way
}

func (r *claimRenewal) stop() {
	r.mu.Lock()
	r.stopped = true
	r.timer.Stop()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel() // ends an Extend in flight
	}
	r.running.Wait()
}
