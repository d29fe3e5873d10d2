package exactlyonce

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Request identifies a write: the merchant's key and the fingerprint of
// the request (method, path and canonical body).
type Request struct {
	Key         string
	Fingerprint string
}

// Response is what a write answered, replayed verbatim on retry.
type Response struct {
	StatusCode int
	Body       []byte
	Replayed   bool
}

// Config tunes the claims in the cache.
type Config struct {
	// LockTTL bounds how long a crashed request can hold a key in the
	// cache (default 5 s); a live request renews its claim every
	// RenewEvery (default 2/5 of LockTTL) for as long as it runs.
	LockTTL    time.Duration
	RenewEvery time.Duration
	// AnswerTTL is how long the cache remembers a key was answered
	// (default 24 h). The database keeps the answer for good.
	AnswerTTL time.Duration
}

// Strategy is how a duplicate is caught before a write runs (the package
// doc).
type Strategy int

// The strategies.
const (
	DatabaseChecked Strategy = iota + 1
	CacheFirst
)

func (s Strategy) String() string {
	if s == CacheFirst {
		return "cache-first"
	}
	return "database-checked"
}

// Runner runs writes exactly once per key. It is safe for concurrent use.
type Runner struct {
	strategy Strategy
	store    ports.IdempotencyStore
	cache    ports.IdempotencyCache
	cobs     ports.CobIntents // CacheFirst only
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      Config
	// background runs what a write leaves to be done off its path: the
	// cache's answered marks and its intents' drops.
	background sync.WaitGroup
	answered   queue[ports.Answered]
	drops      queue[*cachedIntent]
}

// NewDatabaseChecked is the DatabaseChecked strategy over store, with
// claims in cache (nil: none; the database alone decides).
func NewDatabaseChecked(store ports.IdempotencyStore, cache ports.IdempotencyCache, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg Config) *Runner {
	return newRunner(DatabaseChecked, store, cache, nil, clock, ids, log, cfg)
}

// NewCacheFirst is the CacheFirst strategy: claims in the shared cache,
// cob intents in cobs beside them, records in store.
func NewCacheFirst(store ports.IdempotencyStore, cache ports.IdempotencyCache, cobs ports.CobIntents, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg Config) *Runner {
	return newRunner(CacheFirst, store, cache, cobs, clock, ids, log, cfg)
}

func newRunner(strategy Strategy, store ports.IdempotencyStore, cache ports.IdempotencyCache, cobs ports.CobIntents,
	clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg Config,
) *Runner {
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = 5 * time.Second
	}
	if cfg.RenewEvery <= 0 || cfg.RenewEvery >= cfg.LockTTL {
		cfg.RenewEvery = cfg.LockTTL * 2 / 5
	}
	if cfg.AnswerTTL <= 0 {
		cfg.AnswerTTL = 24 * time.Hour
	}
	if log == nil {
		log = slog.Default()
	}
	return &Runner{strategy: strategy, store: store, cache: cache, cobs: cobs, clock: clock, ids: ids, log: log, cfg: cfg}
}

// Strategy is the runner's strategy.
func (r *Runner) Strategy() Strategy { return r.strategy }

// Wait returns once the work writes left behind (marks, drops) is done.
func (r *Runner) Wait() { r.background.Wait() }

// Options says what a write needs beyond its key.
type Options struct {
	// LiveCob: the write may open a live cob at the acquirer (a live Pix
	// create). Its Attempt then keeps the cob's intent (BeforeCob) so the
	// sweep can cancel a cob whose write never commits.
	LiveCob bool
	// DatabaseOnly skips the cache's claim: the write's own transaction
	// serialises concurrent requests of the key (a refund locks its
	// charge's row), and the database's check decides.
	DatabaseOnly bool
}

// Do runs write at most once per (scope, req.Key) and answers a retry as
// the first write answered: the same status and body, Replayed set; a
// different request under a used key gets ErrKeyReused, and one that
// meets the key's write still running gets a *KeyInUseError. write must
// commit Attempt.Record with its resource in one transaction. A write that
// fails because the key turned out used (ports.ErrIdempotencyKeyExists,
// or any error once another request committed the key) is answered as
// that request was.
func (r *Runner) Do(ctx context.Context, scope ports.Scope, req Request, opts Options, write func(*Attempt) (Response, error)) (Response, error) {
	a := &Attempt{Key: ports.IdempotencyKey{Scope: scope, Key: req.Key}, fingerprint: req.Fingerprint, r: r}
	liveCob := opts.LiveCob && scope.Mode == domain.ModeLive
	if liveCob && r.strategy == CacheFirst && !opts.DatabaseOnly {
		// Recorded while the key is claimed: one round trip for both.
		if err := a.startCachedIntent(); err != nil {
			return Response{}, err
		}
	}
	resp, err := r.run(ctx, a, opts, liveCob, write)
	a.settle(ctx)
	return resp, err
}

func (r *Runner) run(ctx context.Context, a *Attempt, opts Options, liveCob bool, write func(*Attempt) (Response, error)) (Response, error) {
	ckey := "idem:" + a.Key.AccountID + ":" + string(a.Key.Mode) + ":" + a.Key.Key
	claim := ports.Claim{}
	if r.cache != nil && !opts.DatabaseOnly {
		var err error
		if claim, err = r.cache.Begin(ctx, ckey, a.fingerprint, r.cfg.LockTTL); err != nil {
			if !errors.Is(err, ports.ErrCacheUnavailable) { // the cache's guard has said so already
				r.log.WarnContext(ctx, "idempotency cache unavailable, using the database alone", "err", err)
			}
			claim = ports.Claim{}
		}
	}
	switch claim.State {
	case ports.ClaimCompleted:
		if claim.Fingerprint != a.fingerprint {
			return Response{}, ErrKeyReused
		}
		if !claim.InRecord {
			return Response{StatusCode: claim.StatusCode, Body: claim.Body, Replayed: true}, nil
		}
		// The answer is in the durable record. A record that is not there
		// after all (a database restored from before it) leaves the key to
		// the database path below, as a lost claim.
		resp, err := r.replay(ctx, a.Key, a.fingerprint)
		if !errors.Is(err, ports.ErrNotFound) {
			return resp, err
		}
		claim = ports.Claim{}
	case ports.ClaimInFlight:
		if claim.Fingerprint != a.fingerprint {
			return Response{}, ErrKeyReused
		}
		// The holder may have answered already: its claim is marked
		// answered after its record commits (answerLater), so the record
		// decides.
		resp, err := r.replay(ctx, a.Key, a.fingerprint)
		if errors.Is(err, ports.ErrNotFound) {
			return Response{}, &KeyInUseError{Remaining: claim.Remaining}
		}
		return resp, err
	}
	owned := claim.State == ports.ClaimAcquired
	completed := false
	if owned {
		stop := RenewClaim(ctx, r.cache, ckey, a.fingerprint, r.cfg.LockTTL, r.cfg.RenewEvery)
		defer stop()
	}
	defer func() {
		if owned && !completed {
			// A detached context: a cancelled request must still free the key.
			ctx := context.WithoutCancel(ctx)
			if err := r.cache.Release(ctx, ckey, a.fingerprint); err != nil {
				r.log.WarnContext(ctx, "release idempotency claim", "err", err)
			}
		}
	}()

	a.checked = !owned || r.strategy != CacheFirst || opts.DatabaseOnly
	if a.checked {
		resp, err := r.check(ctx, a, liveCob)
		if err == nil {
			completed = r.answerLater(owned, ckey, a.fingerprint, resp)
			return resp, nil
		}
		if !errors.Is(err, ports.ErrNotFound) {
			return Response{}, err
		}
	}
	resp, err := write(a)
	a.ran, a.failed = true, err != nil
	switch {
	case errors.Is(err, ports.ErrIdempotencyKeyExists):
		// Another request committed the key first: its answer is this
		// one's.
		resp, err = r.replay(ctx, a.Key, a.fingerprint)
	case err != nil && answerable(err) && (!a.checked || !owned):
		// The key may have been used before the cache lost it (an
		// unchecked write), or, with no claim keeping other requests of
		// the key out, committed by one of them, which changed what this
		// write saw (a refund finds the charge refunded): that request's
		// answer is this one's.
		if r2, rerr := r.replay(ctx, a.Key, a.fingerprint); rerr == nil || errors.Is(rerr, ErrKeyReused) {
			resp, err = r2, rerr
		}
	}
	if err != nil {
		return Response{}, err
	}
	completed = r.answerLater(owned, ckey, a.fingerprint, resp)
	return resp, nil
}

// check looks for the key's record in the database; for a live cob it
// records the cob's intent in the same round trip when the key is unused.
func (r *Runner) check(ctx context.Context, a *Attempt, liveCob bool) (Response, error) {
	if !liveCob {
		return r.replay(ctx, a.Key, a.fingerprint)
	}
	a.txid = a.derivedTxID()
	a.intentInStore = true
	resp, err := r.answer(r.store.IdempotencyRecordOrIntent(ctx, ports.ProviderIntent{Key: a.Key, TxID: a.txid, CreatedAt: r.clock.Now()}))(a.fingerprint)
	if err != nil && !errors.Is(err, ports.ErrNotFound) || err == nil {
		a.intentInStore = false // not recorded (the store failed, or the key was used)
	}
	return resp, err
}

// replay answers from the durable record: the original response, or
// ErrKeyReused for a different request.
func (r *Runner) replay(ctx context.Context, key ports.IdempotencyKey, fingerprint string) (Response, error) {
	return r.answer(r.store.GetIdempotencyRecord(ctx, key))(fingerprint)
}

// answer turns a lookup of the durable record into replay's answer for a
// request of fingerprint.
func (r *Runner) answer(rec *ports.IdempotencyRecord, err error) func(fingerprint string) (Response, error) {
	return func(fingerprint string) (Response, error) {
		if err != nil {
			return Response{}, err
		}
		if rec.Fingerprint != fingerprint {
			return Response{}, ErrKeyReused
		}
		return Response{StatusCode: rec.StatusCode, Body: rec.Body, Replayed: true}, nil
	}
}

// answerLater marks the owned claim answered, off the request's path:
// the answer stays in the durable record only, which every run writes (or,
// for a replay, read), so the cache keeps a few bytes a key and a replay
// that finds them reads the record. Until the mark lands the claim reads
// in flight, and a request that finds it so reads the record too, so the
// answer is the same either way. The marks of concurrent requests go in
// one call. A mark that fails leaves the claim to expire within the lock
// TTL; the record answers meanwhile. It reports whether the claim is
// taken care of.
func (r *Runner) answerLater(owned bool, ckey, fingerprint string, resp Response) bool {
	if !owned {
		return false
	}
	r.answered.add(ports.Answered{Key: ckey, Fingerprint: fingerprint, StatusCode: resp.StatusCode}, r.background.Go, r.markAnswered)
	return true
}

func (r *Runner) markAnswered(batch []ports.Answered) {
	if err := r.cache.CompleteInRecord(context.Background(), r.cfg.AnswerTTL, batch...); err != nil {
		r.log.Warn("mark idempotency keys answered", "count", len(batch), "err", err)
	}
}

// answerable reports whether a write's failure may hide an answer of
// its key: not when the database or the request is gone, where reading
// the record would wait for the same outage again.
func answerable(err error) bool {
	return !errors.Is(err, ports.ErrStoreUnavailable) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
