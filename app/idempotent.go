package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// runIdempotent runs a financial write of scope exactly once per
// idempotency key, for every resource that takes an Idempotency-Key
// (charges, payouts): it claims the key in the cache (answering a replay,
// 409 reused or 409 in use from there), answers from the durable record
// when the key was used, and otherwise calls run, which must write its
// record with the resource in one transaction. A run that loses the race
// to another process (ErrIdempotencyKeyExists) answers as that one did.
// With intent set, the durable check also records it when the key is
// unused (ports.ProviderIntents.IdempotencyRecordOrIntent).
//
// With skipCheck, a run whose claim the cache acquired skips the durable
// check; run is told (checked false), and its failure is answered from the
// durable record when the key turns out to be used: a replay whose cached
// answer the cache lost gets the original answer, not this run's refusal.
func (s *ChargeService) runIdempotent(ctx context.Context, scope ports.Scope, idem Idempotency, intent *ports.ProviderIntent,
	skipCheck bool, run func(dkey ports.IdempotencyKey, checked bool) (Response, error),
) (Response, error) {
	dkey := ports.IdempotencyKey{Scope: scope, Key: idem.Key}
	ckey := "idem:" + scope.AccountID + ":" + string(scope.Mode) + ":" + idem.Key

	claim, err := s.cache.Begin(ctx, ckey, idem.Fingerprint, s.cfg.IdempotencyLockTTL)
	if err != nil {
		if !errors.Is(err, ports.ErrCacheUnavailable) { // the cache's guard has said so already
			s.log.WarnContext(ctx, "idempotency cache unavailable, using the database alone", "err", err)
		}
		claim = ports.Claim{}
	}
	switch claim.State {
	case ports.ClaimCompleted:
		if claim.Fingerprint != idem.Fingerprint {
			return Response{}, ErrIdempotencyKeyReused
		}
		if !claim.InRecord {
			return Response{StatusCode: claim.StatusCode, Body: claim.Body, Replayed: true}, nil
		}
		// The answer is in the durable record (complete). A record that
		// is not there after all (a database restored from before it)
		// leaves the key to the database path below, as a lost claim.
		resp, err := s.replay(ctx, dkey, idem.Fingerprint)
		if !errors.Is(err, ports.ErrNotFound) {
			return resp, err
		}
		claim = ports.Claim{}
	case ports.ClaimInFlight:
		if claim.Fingerprint != idem.Fingerprint {
			return Response{}, ErrIdempotencyKeyReused
		}
		// The holder may have answered already: its claim is marked
		// answered after its record commits and its answer is sent
		// (answerLater), so the record decides.
		resp, err := s.replay(ctx, dkey, idem.Fingerprint)
		if errors.Is(err, ports.ErrNotFound) {
			return Response{}, &KeyInUseError{Remaining: claim.Remaining}
		}
		return resp, err
	}
	owned := claim.State == ports.ClaimAcquired
	completed := false
	if owned {
		stop := s.renewClaim(ctx, ckey, idem.Fingerprint)
		defer stop()
	}
	defer func() {
		if owned && !completed {
			// A detached context: a cancelled request must still free the key.
			ctx := context.WithoutCancel(ctx)
			if err := s.cache.Release(ctx, ckey, idem.Fingerprint); err != nil {
				s.log.WarnContext(ctx, "release idempotency claim", "err", err)
			}
		}
	}()

	checked := !owned || !skipCheck
	if checked {
		var resp Response
		if intent != nil {
			resp, err = s.answer(s.cfg.Intents.IdempotencyRecordOrIntent(ctx, *intent))(idem.Fingerprint)
		} else {
			resp, err = s.replay(ctx, dkey, idem.Fingerprint)
		}
		if err == nil {
			completed = s.answerLater(owned, ckey, idem.Fingerprint, resp)
			return resp, nil
		}
		if !errors.Is(err, ports.ErrNotFound) {
			return Response{}, err
		}
	}

	resp, err := run(dkey, checked)
	switch {
	case errors.Is(err, ports.ErrIdempotencyKeyExists):
		// Another process committed the same key first, or (unchecked) the
		// key was used before the cache lost it: answer as that one did.
		resp, err = s.replay(ctx, dkey, idem.Fingerprint)
	case err != nil && !checked:
		if r, rerr := s.replay(ctx, dkey, idem.Fingerprint); rerr == nil || errors.Is(rerr, ErrIdempotencyKeyReused) {
			resp, err = r, rerr
		}
	}
	if err != nil {
		return Response{}, err
	}
	completed = s.answerLater(owned, ckey, idem.Fingerprint, resp)
	return resp, nil
}

// renewClaim extends this request's claim every IdempotencyRenewEvery
// until stop is called (RenewClaim).
func (s *ChargeService) renewClaim(ctx context.Context, ckey, fingerprint string) (stop func()) {
	return RenewClaim(ctx, s.cache, ckey, fingerprint, s.cfg.IdempotencyLockTTL, s.cfg.IdempotencyRenewEvery)
}

// RenewClaim extends a claim on ckey in cache to lockTTL every renewEvery
// until stop is called, so the claim can stay short: a request killed with
// its process frees the key within lockTTL, while a slow one (a slow
// acquirer) keeps it. stop returns once renewal has ended, so no renewal
// runs after the claim is completed or released, and it may be called
// more than once. Renewal is a timer, not a goroutine: nearly every
// request ends before the first tick, and then costs no goroutine, ticker
// or context (issue 17). Every write that claims an idempotency key uses
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

// replay answers from the durable record: the original response, or
// ErrIdempotencyKeyReused for a different request.
func (s *ChargeService) replay(ctx context.Context, key ports.IdempotencyKey, fingerprint string) (Response, error) {
	return s.answer(s.records.GetIdempotencyRecord(ctx, key))(fingerprint)
}

// answer turns a lookup of the durable record into replay's answer for a
// request of fingerprint.
func (s *ChargeService) answer(rec *ports.IdempotencyRecord, err error) func(fingerprint string) (Response, error) {
	return func(fingerprint string) (Response, error) {
		if err != nil {
			return Response{}, err
		}
		if rec.Fingerprint != fingerprint {
			return Response{}, ErrIdempotencyKeyReused
		}
		return Response{StatusCode: rec.StatusCode, Body: rec.Body, Replayed: true}, nil
	}
}

// answerLater marks the owned claim answered, off the request's path:
// the answer stays in the durable record only, which every run writes (or,
// for a replay, read), so the cache keeps a few bytes a key and a replay
// that finds them reads the record (issue 17). Until the mark lands the
// claim reads in flight, and a request that finds it so reads the record
// too (runIdempotent), so the answer is the same either way. The marks of
// concurrent requests go in one pipeline (ChargeService.answered). A mark
// that fails leaves the claim to expire within the lock TTL; the record
// answers meanwhile. It reports whether the claim is taken care of.
func (s *ChargeService) answerLater(owned bool, ckey, fingerprint string, resp Response) bool {
	if !owned {
		return false
	}
	s.answered.add(ports.Answered{Key: ckey, Fingerprint: fingerprint, StatusCode: resp.StatusCode}, s.background.Go, s.markAnswered)
	return true
}

// markAnswered marks a batch of claims answered (answerLater).
func (s *ChargeService) markAnswered(batch []ports.Answered) {
	if err := s.cache.CompleteInRecord(context.Background(), s.cfg.IdempotencyTTL, batch...); err != nil {
		s.log.Warn("mark idempotency keys answered", "count", len(batch), "err", err)
	}
}
