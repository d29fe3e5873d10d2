package idempotency

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// RedisIntents keeps cob intents (ports.CobIntents) in IntentBuckets sorted
// sets, an account's intents all in one (CobIntentKey): the member is
// "txid|account|mode" and the score the intent's time in milliseconds, so
// the sweep reads the oldest first of each bucket and merges them. Each
// bucket's key carries its own hash tag, so on a Redis Cluster the buckets
// spread over the nodes and no command spans two slots. The idempotency key is
// not kept (the sweep goes by txid), and neither is anything of the payer.
// Each call is bounded by Timeout (default 200 ms): it runs on the
// request path, before the cob. With Breaker set (the claims' Guarded on
// the same Redis), a call goes through its breaker instead: nothing is
// sent while it is open, and a failure here opens it for the claims too;
// a drop, which no request waits on, gets the breaker's BackgroundTimeout.
type RedisIntents struct {
	client  redis.Cmdable
	prefix  string
	Timeout time.Duration
	Breaker *Guarded
	// Async, when set, sends StartCobIntent's write without holding up
	// the caller (go-redis's deferred autopipeliner; quitad sends its
	// claims on the same one, so an intent submitted just before its
	// claim rides the claim's batch). Without it the write is sent when
	// its wait is first called.
	Async *redis.AutoPipeliner
}

var _ ports.CobIntents = (*RedisIntents)(nil)

// NewRedisIntents keeps the intents under CobIntentKey(prefix, …) in
// client.
func NewRedisIntents(client redis.Cmdable, prefix string) *RedisIntents {
	return &RedisIntents{client: client, prefix: prefix}
}

// IntentBuckets is how many sorted sets hold the intents.
const IntentBuckets = 16

// CobIntentKey is the sorted set that holds accountID's intents under
// prefix: prefix+"cobintents:{N}", N the account's bucket (FNV-1a of its
// id modulo IntentBuckets).
func CobIntentKey(prefix, accountID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(accountID))
	return bucketKey(prefix, int(h.Sum32()%IntentBuckets))
}

func bucketKey(prefix string, n int) string {
	return prefix + "cobintents:{" + strconv.Itoa(n) + "}"
}

// byBucket groups ins by their set, in the order each set first appears.
func (r *RedisIntents) byBucket(ins []ports.ProviderIntent) (keys []string, groups map[string][]ports.ProviderIntent) {
	groups = make(map[string][]ports.ProviderIntent, 1)
	for _, in := range ins {
		k := CobIntentKey(r.prefix, in.Key.AccountID)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], in)
	}
	return keys, groups
}

// perBucket sends one command per set of ins (cmd builds it), as a single
// command when they share one and as one pipeline otherwise.
func (r *RedisIntents) perBucket(ctx context.Context, ins []ports.ProviderIntent, cmd func(context.Context, redis.Cmdable, string, []ports.ProviderIntent) redis.Cmder) error {
	keys, groups := r.byBucket(ins)
	if len(keys) == 1 {
		return cmd(ctx, r.client, keys[0], groups[keys[0]]).Err()
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			cmd(ctx, p, k, groups[k])
		}
		return nil
	})
	return err
}

// do runs fn under the breaker when there is one, else under Timeout.
func (r *RedisIntents) do(ctx context.Context, fn func(context.Context) error) error {
	if r.Breaker != nil {
		return r.Breaker.call(ctx, fn)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = defaultGuardTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return fn(ctx)
}

func intentMember(in ports.ProviderIntent) string {
	return in.TxID + "|" + in.Key.AccountID + "|" + string(in.Key.Mode)
}

// parseIntentMember reads a member back; ok is false for one this package
// did not write.
func parseIntentMember(m string, ms float64) (ports.ProviderIntent, bool) {
	parts := strings.Split(m, "|")
	if len(parts) != 3 || !domain.ValidTxID(parts[0]) || parts[1] == "" {
		return ports.ProviderIntent{}, false
	}
	mode := domain.Mode(parts[2])
	if mode != domain.ModeLive && mode != domain.ModeTest {
		return ports.ProviderIntent{}, false
	}
	return ports.ProviderIntent{
		Key:       ports.IdempotencyKey{Scope: ports.Scope{AccountID: parts[1], Mode: mode}},
		TxID:      parts[0],
		CreatedAt: time.UnixMilli(int64(ms)).UTC(),
	}, true
}

// RecordCobIntent implements ports.CobIntents: one ZADD NX per bucket of
// ins, each applied whole by Redis; the intents of one account, which
// share a bucket, are recorded all or none.
func (r *RedisIntents) RecordCobIntent(ctx context.Context, ins ...ports.ProviderIntent) error {
	if len(ins) == 0 {
		return nil
	}
	add := func(ctx context.Context, c redis.Cmdable, key string, ins []ports.ProviderIntent) redis.Cmder {
		zs := make([]redis.Z, len(ins))
		for i, in := range ins {
			zs[i] = redis.Z{Score: float64(in.CreatedAt.UnixMilli()), Member: intentMember(in)}
		}
		return c.ZAddNX(ctx, key, zs...)
	}
	if err := r.do(ctx, func(ctx context.Context) error { return r.perBucket(ctx, ins, add) }); err != nil {
		return fmt.Errorf("cob intents: record %s: %w", txids(ins), err)
	}
	return nil
}

// StartCobIntent implements ports.CobIntents: the ZADD NX goes to Async
// at once, unless the breaker is skipping Redis; the wait is bounded as
// RecordCobIntent's call is, and a failure of it opens the breaker too.
func (r *RedisIntents) StartCobIntent(ctx context.Context, in ports.ProviderIntent) (wait func() error) {
	var sent *redis.AutoFuture
	if r.Async != nil && (r.Breaker == nil || !r.Breaker.skipping()) {
		// The score goes as an integer: go-redis writes an int64 with
		// strconv.AppendInt, a float64 with AppendFloat, whose frames grew
		// the stacks of the autopipeliner's flushers on every batch.
		// Redis reads either as the same score.
		f := r.Async.Submit(ctx, redis.NewIntCmd(ctx, "zadd", CobIntentKey(r.prefix, in.Key.AccountID), "nx", in.CreatedAt.UnixMilli(), intentMember(in)))
		sent = &f
	}
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			if sent == nil {
				err = r.RecordCobIntent(ctx, in)
				return
			}
			if err = r.do(ctx, sent.WaitContext); err != nil {
				err = fmt.Errorf("cob intents: record %s: %w", in.TxID, err)
			}
		})
		return err
	}
}

// txids names ins in an error: the first txid and how many more.
func txids(ins []ports.ProviderIntent) string {
	if len(ins) == 1 {
		return ins[0].TxID
	}
	return fmt.Sprintf("%s and %d more", ins[0].TxID, len(ins)-1)
}

// CobIntentsBefore implements ports.CobIntents: the oldest limit of each
// bucket, read in one pipeline and merged. A member this package did not
// write is removed, not returned.
func (r *RedisIntents) CobIntentsBefore(ctx context.Context, t time.Time, limit int) ([]ports.ProviderIntent, error) {
	limit = max(limit, 1)
	by := &redis.ZRangeBy{Min: "-inf", Max: "(" + strconv.FormatInt(t.UnixMilli(), 10), Count: int64(limit)}
	cmds := make([]*redis.ZSliceCmd, IntentBuckets)
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for n := range cmds {
				cmds[n] = p.ZRangeByScoreWithScores(ctx, bucketKey(r.prefix, n), by)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cob intents: list: %w", err)
	}
	var out []ports.ProviderIntent
	junk := map[string][]any{}
	for n, cmd := range cmds {
		for _, z := range cmd.Val() {
			m, _ := z.Member.(string)
			in, ok := parseIntentMember(m, z.Score)
			if !ok {
				k := bucketKey(r.prefix, n)
				junk[k] = append(junk[k], z.Member)
				continue
			}
			out = append(out, in)
		}
	}
	for k, members := range junk {
		if err := r.do(ctx, func(ctx context.Context) error { return r.client.ZRem(ctx, k, members...).Err() }); err != nil {
			return nil, fmt.Errorf("cob intents: drop unreadable members: %w", err)
		}
	}
	slices.SortFunc(out, func(a, b ports.ProviderIntent) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.TxID, b.TxID))
	})
	return out[:min(len(out), limit)], nil
}

// DropCobIntent implements ports.CobIntents: one ZREM per bucket of ins.
func (r *RedisIntents) DropCobIntent(ctx context.Context, ins ...ports.ProviderIntent) error {
	if len(ins) == 0 {
		return nil
	}
	rem := func(ctx context.Context, c redis.Cmdable, key string, ins []ports.ProviderIntent) redis.Cmder {
		members := make([]any, len(ins))
		for i, in := range ins {
			members[i] = intentMember(in)
		}
		return c.ZRem(ctx, key, members...)
	}
	drop := func(ctx context.Context) error { return r.perBucket(ctx, ins, rem) }
	var err error
	if r.Breaker != nil {
		err = r.Breaker.background(ctx, drop) // no request waits on a drop
	} else {
		err = r.do(ctx, drop)
	}
	if err != nil {
		return fmt.Errorf("cob intents: drop %s: %w", txids(ins), err)
	}
	return nil
}
