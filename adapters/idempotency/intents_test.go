package idempotency_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

func TestRedisIntents(t *testing.T) {
	t.Parallel()
	client, prefix := newRedisClient(t)
	ctx := context.Background()
	r := idempotency.NewRedisIntents(client, prefix)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	intent := func(n int, mode domain.Mode, at time.Time) ports.ProviderIntent {
		return ports.ProviderIntent{
			Key:  ports.IdempotencyKey{Scope: ports.Scope{AccountID: "acct_" + string(rune('a'+n)), Mode: mode}, Key: "the-merchants-key"},
			TxID: domain.DeriveTxID("intent", string(rune('a'+n))), CreatedAt: at,
		}
	}
	a, b, c := intent(0, domain.ModeLive, t0), intent(1, domain.ModeTest, t0.Add(time.Second)), intent(2, domain.ModeLive, t0.Add(2*time.Second))
	for _, in := range []ports.ProviderIntent{c, a, b} {
		if err := r.RecordCobIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	// Recorded again later: it keeps its first time.
	again := a
	again.CreatedAt = t0.Add(time.Hour)
	if err := r.RecordCobIntent(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, err := r.CobIntentsBefore(ctx, t0.Add(2*time.Second), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []ports.ProviderIntent{a, b} // oldest first; c is not before t
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		w := want[i]
		w.Key.Key = "" // not kept
		if got[i] != w {
			t.Fatalf("intent %d: got %+v, want %+v", i, got[i], w)
		}
	}
	if got, err := r.CobIntentsBefore(ctx, t0.Add(time.Hour), 1); err != nil || len(got) != 1 || got[0].TxID != a.TxID {
		t.Fatalf("limit 1: %+v %v", got, err)
	}
	// Nothing of the merchant's key is stored.
	var members []string
	for _, in := range []ports.ProviderIntent{a, b, c} {
		m, err := client.ZRange(ctx, idempotency.CobIntentKey(prefix, in.Key.AccountID), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, m...)
	}
	slices.Sort(members)
	members = slices.Compact(members) // two accounts may share a bucket
	if len(members) != 3 || strings.Contains(strings.Join(members, ","), "the-merchants-key") {
		t.Fatalf("members %q", members)
	}

	if err := r.DropCobIntent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := r.DropCobIntent(ctx, a); err != nil { // none: succeeds
		t.Fatal(err)
	}
	// A member this package did not write is dropped, not returned.
	junkKey := idempotency.CobIntentKey(prefix, b.Key.AccountID)
	if err := client.ZAdd(ctx, junkKey, redisZ(t0, "not|an intent")).Err(); err != nil {
		t.Fatal(err)
	}
	got, err = r.CobIntentsBefore(ctx, t0.Add(time.Hour), 10)
	if err != nil || len(got) != 2 || got[0].TxID != b.TxID || got[1].TxID != c.TxID {
		t.Fatalf("after the drop: %+v %v", got, err)
	}
	if n, _ := client.ZScore(ctx, junkKey, "not|an intent").Result(); n != 0 {
		t.Fatalf("the unreadable member is still in %s", junkKey)
	}
}

// Many intents go in one call each way: one ZADD records them all (an
// intent recorded before keeps its time), one ZREM drops them all, and
// calls with none send nothing.
func TestRedisIntentsMany(t *testing.T) {
	t.Parallel()
	client, prefix := newRedisClient(t)
	var sent atomic.Int64
	client.AddHook(commandCounter{&sent})
	ctx := context.Background()
	r := idempotency.NewRedisIntents(client, prefix)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ins := make([]ports.ProviderIntent, 5)
	for i := range ins {
		ins[i] = ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: ports.Scope{AccountID: "acct_many", Mode: domain.ModeLive}},
			TxID: domain.DeriveTxID("many", strconv.Itoa(i)), CreatedAt: t0.Add(time.Duration(i) * time.Second)}
	}
	if err := r.RecordCobIntent(ctx, ins[0]); err != nil {
		t.Fatal(err)
	}
	again := slices.Clone(ins)
	again[0].CreatedAt = t0.Add(time.Hour)
	before := sent.Load()
	if err := r.RecordCobIntent(ctx, again...); err != nil {
		t.Fatal(err)
	}
	if n := sent.Load() - before; n != 1 {
		t.Fatalf("recording 5 intents sent %d commands, want 1", n)
	}
	got, err := r.CobIntentsBefore(ctx, t0.Add(2*time.Hour), 10)
	if err != nil || len(got) != len(ins) {
		t.Fatalf("got %+v %v, want the 5 intents", got, err)
	}
	for i := range ins {
		if got[i].TxID != ins[i].TxID || !got[i].CreatedAt.Equal(ins[i].CreatedAt) {
			t.Fatalf("intent %d: got %+v, want %+v (the first time kept)", i, got[i], ins[i])
		}
	}
	before = sent.Load()
	if err := r.DropCobIntent(ctx, ins[1], ins[3], ins[4]); err != nil {
		t.Fatal(err)
	}
	if err := r.RecordCobIntent(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.DropCobIntent(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sent.Load() - before; n != 1 {
		t.Fatalf("dropping 3 intents and calling with none sent %d commands, want 1", n)
	}
	got, err = r.CobIntentsBefore(ctx, t0.Add(2*time.Hour), 10)
	if err != nil || len(got) != 2 || got[0].TxID != ins[0].TxID || got[1].TxID != ins[2].TxID {
		t.Fatalf("after the drop: %+v %v, want intents 0 and 2", got, err)
	}
}

func redisZ(at time.Time, member string) redis.Z {
	return redis.Z{Score: float64(at.UnixMilli()), Member: member}
}

// The intent is recorded on the request path, before the cob: a Redis
// that accepts and never answers costs the call its Timeout, not the
// client's read timeout.
func TestRedisIntentsHangingRedis(t *testing.T) {
	t.Parallel()
	r := idempotency.NewRedisIntents(hangingRedis(t), "x:")
	r.Timeout = 100 * time.Millisecond
	start := time.Now()
	err := r.RecordCobIntent(t.Context(), ports.ProviderIntent{TxID: domain.DeriveTxID("x"), CreatedAt: time.Now()})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("record on a hanging Redis: %v after %v", err, time.Since(start))
	}
}

// The intents share the claims' breaker (one Redis, one verdict): while
// it is open nothing is sent, and an intent call that fails opens it for
// the claims too.
func TestRedisIntentsShareTheClaimsBreaker(t *testing.T) {
	t.Parallel()
	client, prefix := newRedisClient(t)
	var sent atomic.Int64
	client.AddHook(commandCounter{&sent})
	failing := &mocks.IdempotencyCacheMock{
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{}, errors.New("redis: connection refused")
		},
	}
	g := &idempotency.Guarded{Cache: failing, Cooldown: time.Hour}
	r := idempotency.NewRedisIntents(client, prefix)
	r.Breaker = g
	in := ports.ProviderIntent{TxID: domain.DeriveTxID("b"), CreatedAt: time.Now()}
	if err := r.RecordCobIntent(t.Context(), in); err != nil || sent.Load() == 0 {
		t.Fatalf("closed breaker: %v, %d commands sent", err, sent.Load())
	}
	before := sent.Load() // the intent and the connection's handshake
	if _, err := g.Begin(t.Context(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) {
		t.Fatalf("claim: %v", err)
	}
	if err := r.RecordCobIntent(t.Context(), in); !errors.Is(err, ports.ErrCacheUnavailable) || sent.Load() != before {
		t.Fatalf("open breaker: %v, %d commands sent, want none", err, sent.Load()-before)
	}

	// The other way: a hanging Redis under the intents opens it for the claims.
	hanging := hangingRedis(t)
	healthy := &mocks.IdempotencyCacheMock{
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{State: ports.ClaimAcquired}, nil
		},
	}
	g2 := &idempotency.Guarded{Cache: healthy, Timeout: 50 * time.Millisecond, Cooldown: time.Hour}
	r2 := idempotency.NewRedisIntents(hanging, "x:")
	r2.Breaker = g2
	if err := r2.RecordCobIntent(t.Context(), in); !errors.Is(err, ports.ErrCacheUnavailable) {
		t.Fatalf("hanging Redis: %v", err)
	}
	if _, err := g2.Begin(t.Context(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) || len(healthy.BeginCalls()) != 0 {
		t.Fatalf("claim after the intents failed: %v, %d calls", err, len(healthy.BeginCalls()))
	}
}

// A drop, which no request waits on, gets the breaker's BackgroundTimeout
// on a Redis that does not answer, where a record gets its Timeout; past
// it, the drop opens the breaker like any failure.
func TestRedisIntentsDropGetsTheBackgroundBound(t *testing.T) {
	t.Parallel()
	healthy := &mocks.IdempotencyCacheMock{
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{State: ports.ClaimAcquired}, nil
		},
	}
	const short, long = 30 * time.Millisecond, 400 * time.Millisecond
	g := &idempotency.Guarded{Cache: healthy, Timeout: short, BackgroundTimeout: long, Cooldown: time.Hour}
	r := idempotency.NewRedisIntents(hangingRedis(t), "x:")
	r.Breaker = g
	in := ports.ProviderIntent{TxID: domain.DeriveTxID("d"), CreatedAt: time.Now()}
	start := time.Now()
	err := r.DropCobIntent(t.Context(), in)
	took := time.Since(start)
	if !errors.Is(err, ports.ErrCacheUnavailable) || took < long || took > 5*time.Second {
		t.Fatalf("drop on a Redis that never answers: %v after %v, want the breaker's verdict after %v", err, took, long)
	}
	if _, err := g.Begin(t.Context(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) {
		t.Fatalf("claim after the drop failed: %v, want the breaker open", err)
	}

	// A record, which a request waits on, is held to Timeout.
	g2 := &idempotency.Guarded{Cache: healthy, Timeout: short, BackgroundTimeout: long, Cooldown: time.Hour}
	r2 := idempotency.NewRedisIntents(hangingRedis(t), "x:")
	r2.Breaker = g2
	start = time.Now()
	if err := r2.RecordCobIntent(t.Context(), in); !errors.Is(err, ports.ErrCacheUnavailable) || time.Since(start) >= long {
		t.Fatalf("record on a Redis that never answers: %v after %v, want it within %v", err, time.Since(start), long)
	}
}

// commandCounter counts the commands a client sends.
type commandCounter struct{ n *atomic.Int64 }

func (commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// hangingRedis is a client of a server that accepts connections and never
// answers.
func hangingRedis(t *testing.T) *redis.Client {
	t.Helper()
	return hangingRedisReadTimeout(t, 10*time.Second)
}

// hangingRedisReadTimeout is hangingRedis whose client gives up a read
// after readTimeout.
func hangingRedisReadTimeout(t *testing.T, readTimeout time.Duration) *redis.Client {
	t.Helper()
	addr, _ := testenv.HangingServer(t)
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: readTimeout, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	return client
}

// asyncOf is client's non-blocking autopipeliner, closed with the test.
func asyncOf(t *testing.T, client *redis.Client) *redis.AutoPipeliner {
	t.Helper()
	ap, err := client.AsyncAutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ap.Close() })
	return ap
}

// StartCobIntent sends the intent without holding up its caller and saves
// it as RecordCobIntent does; its wait answers the same every time. Without
// an async client the intent is written by the first wait.
func TestRedisIntentsStart(t *testing.T) {
	t.Parallel()
	client, prefix := newRedisClient(t)
	ctx := context.Background()
	for _, async := range []bool{true, false} {
		r := idempotency.NewRedisIntents(client, prefix+strconv.FormatBool(async)+":")
		if async {
			r.Async = asyncOf(t, client)
		}
		at := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
		in := ports.ProviderIntent{
			Key:  ports.IdempotencyKey{Scope: ports.Scope{AccountID: "acct_s", Mode: domain.ModeLive}, Key: "the-merchants-key"},
			TxID: domain.DeriveTxID("start", strconv.FormatBool(async)), CreatedAt: at,
		}
		wait := r.StartCobIntent(ctx, in)
		if async {
			// Sent without a wait: it reaches Redis on its own.
			deadline := time.Now().Add(5 * time.Second)
			for {
				got, err := r.CobIntentsBefore(ctx, at.Add(time.Second), 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("async: the intent never reached Redis before its wait")
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		for range 2 {
			if err := wait(); err != nil {
				t.Fatalf("async=%v: wait: %v", async, err)
			}
		}
		got, err := r.CobIntentsBefore(ctx, at.Add(time.Second), 10)
		want := in
		want.Key.Key = "" // not kept
		if err != nil || len(got) != 1 || got[0] != want {
			t.Fatalf("async=%v: intents %+v %v, want %+v", async, got, err, want)
		}
	}
}

// StartCobIntent goes through the claims' breaker: while it is open
// nothing is sent and the wait says the cache is unavailable; a Redis that
// never answers costs the wait the breaker's timeout and opens it for the
// claims.
func TestRedisIntentsStartUnderTheBreaker(t *testing.T) {
	t.Parallel()
	client, prefix := newRedisClient(t)
	failing := &mocks.IdempotencyCacheMock{
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{}, errors.New("redis: connection refused")
		},
	}
	g := &idempotency.Guarded{Cache: failing, Cooldown: time.Hour}
	if _, err := g.Begin(t.Context(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) {
		t.Fatalf("claim: %v", err)
	}
	r := idempotency.NewRedisIntents(client, prefix)
	r.Breaker, r.Async = g, asyncOf(t, client)
	at := time.Now()
	in := ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: ports.Scope{AccountID: "acct_o", Mode: domain.ModeLive}},
		TxID: domain.DeriveTxID("open"), CreatedAt: at}
	if err := r.StartCobIntent(t.Context(), in)(); !errors.Is(err, ports.ErrCacheUnavailable) {
		t.Fatalf("open breaker: %v", err)
	}
	time.Sleep(50 * time.Millisecond)                        // what was sent would be there by now
	unguarded := idempotency.NewRedisIntents(client, prefix) // r's reads are refused too
	if got, err := unguarded.CobIntentsBefore(t.Context(), at.Add(time.Second), 10); err != nil || len(got) != 0 {
		t.Fatalf("open breaker: %+v %v in Redis, want nothing sent", got, err)
	}

	// The client would wait 3 s for an answer; the breaker's 50 ms bound the wait.
	hanging := hangingRedisReadTimeout(t, 3*time.Second)
	healthy := &mocks.IdempotencyCacheMock{
		BeginFunc: func(context.Context, string, string, time.Duration) (ports.Claim, error) {
			return ports.Claim{State: ports.ClaimAcquired}, nil
		},
	}
	g2 := &idempotency.Guarded{Cache: healthy, Timeout: 50 * time.Millisecond, Cooldown: time.Hour}
	r2 := idempotency.NewRedisIntents(hanging, "x:")
	r2.Breaker, r2.Async = g2, asyncOf(t, hanging)
	start := time.Now()
	if err := r2.StartCobIntent(t.Context(), in)(); !errors.Is(err, ports.ErrCacheUnavailable) || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("hanging Redis: %v after %v", err, time.Since(start))
	}
	if _, err := g2.Begin(t.Context(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) || len(healthy.BeginCalls()) != 0 {
		t.Fatalf("claim after the intent failed: %v, %d calls", err, len(healthy.BeginCalls()))
	}
}

// Intents of many accounts spread over the buckets, each account's in one
// set, and the sweep merges them oldest first up to its limit. Recording
// or dropping intents of several buckets is one pipeline.
func TestRedisIntentsBuckets(t *testing.T) {
	t.Parallel()
	client, prefix := newRedisClient(t)
	ctx := context.Background()
	r := idempotency.NewRedisIntents(client, prefix)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var ins []ports.ProviderIntent
	buckets := map[string]bool{}
	for i := range 40 {
		acct := "acct_b" + strconv.Itoa(i)
		buckets[idempotency.CobIntentKey(prefix, acct)] = true
		ins = append(ins, ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: ports.Scope{AccountID: acct, Mode: domain.ModeLive}},
			TxID: domain.DeriveTxID("buckets", strconv.Itoa(i)), CreatedAt: t0.Add(time.Duration(40-i) * time.Second)})
	}
	if len(buckets) < idempotency.IntentBuckets/2 {
		t.Fatalf("40 accounts fell in %d buckets", len(buckets))
	}
	if !strings.HasSuffix(idempotency.CobIntentKey(prefix, "acct_b0"), "}") || !strings.Contains(idempotency.CobIntentKey(prefix, "acct_b0"), "cobintents:{") {
		t.Fatalf("key %q has no hash tag", idempotency.CobIntentKey(prefix, "acct_b0"))
	}
	if err := r.RecordCobIntent(ctx, ins...); err != nil {
		t.Fatal(err)
	}
	got, err := r.CobIntentsBefore(ctx, t0.Add(time.Hour), 5)
	if err != nil || len(got) != 5 {
		t.Fatalf("got %d %v, want 5", len(got), err)
	}
	for i, in := range got { // the oldest is the last recorded
		if want := ins[39-i]; in.TxID != want.TxID || !in.CreatedAt.Equal(want.CreatedAt) {
			t.Fatalf("intent %d: %+v, want %+v", i, in, want)
		}
	}
	if err := r.DropCobIntent(ctx, ins[:39]...); err != nil {
		t.Fatal(err)
	}
	got, err = r.CobIntentsBefore(ctx, t0.Add(time.Hour), 100)
	if err != nil || len(got) != 1 || got[0].TxID != ins[39].TxID {
		t.Fatalf("after dropping 39: %+v %v", got, err)
	}
	for k := range buckets {
		n, err := client.ZCard(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := k == idempotency.CobIntentKey(prefix, ins[39].Key.AccountID); (n == 1) != want || n > 1 {
			t.Errorf("%s holds %d", k, n)
		}
	}
}
