package wiring

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/ports"
)

// provideRedis connects to Redis when configured; nil means the embedded
// default without Redis.
func provideRedis(ctx context.Context, cfg Config) (redis.UniversalClient, func(), error) {
	if cfg.RedisURL == "" {
		return nil, func() {}, nil
	}
	client, err := newRedisClient(cfg.RedisURL)
	if err != nil {
		return nil, nil, err
	}
	if err := client.Ping(ctx).Err(); err != nil {
		// Redis is only a fast path: start anyway; /healthz reports it.
		slog.WarnContext(ctx, "redis unreachable at start; idempotency falls back to the database", "err", err)
	}
	return client, func() { client.Close() }, nil
}

// provideCache picks Redis when configured and the in-process cache
// otherwise.
func provideCache(cfg Config, client redis.UniversalClient, clock ports.Clock) ports.IdempotencyCache {
	if client == nil {
		return idempotency.NewMemory(clock.Now)
	}
	return &idempotency.Guarded{Cache: idempotency.NewRedis(hotPath(client, slog.Default()), redisPrefix(cfg)), Log: slog.Default()}
}

// provideCobIntents keeps cob intents in Redis when it is configured, so a
// create whose claim Redis acquired skips the database's replay check
// (exactlyonce.CacheFirst); nil without Redis. They share the
// claims' breaker: one Redis, one verdict on it.
func provideCobIntents(cfg Config, client redis.UniversalClient, cache ports.IdempotencyCache) ports.CobIntents {
	if client == nil {
		return nil
	}
	intents := idempotency.NewRedisIntents(hotPath(client, slog.Default()), redisPrefix(cfg))
	intents.Breaker, _ = cache.(*idempotency.Guarded)
	if async, err := client.AsyncAutoPipeline(); err == nil { // only an invalid configuration fails
		intents.Async = async
	}
	return intents
}

// provideExactlyOnce picks the money writes' strategy: CacheFirst when
// Redis is configured (its claims and cob intents are shared by every
// process), DatabaseChecked otherwise (the embedded default's in-process
// cache cannot vouch for another process).
func provideExactlyOnce(db *store.DB, cache ports.IdempotencyCache, cobs ports.CobIntents, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger) *exactlyonce.Runner {
	if cobs != nil {
		return exactlyonce.NewCacheFirst(db, cache, cobs, clock, ids, log, exactlyonce.Config{})
	}
	return exactlyonce.NewDatabaseChecked(db, cache, clock, ids, log, exactlyonce.Config{})
}

// provideKeyedWrites is the cache by which the POSTs other than the money
// writes honour an Idempotency-Key (httpapi.Deps.KeyedWrites): the money
// writes' cache, sealed, since those answers carry one-time secrets (API
// key cleartext, webhook signing secrets). docs/security.md, item 26.
func provideKeyedWrites(cfg Config, cache ports.IdempotencyCache, log *slog.Logger) (*idempotency.Sealed, error) {
	secret, err := keyedWritesSecret(cfg, log)
	if err != nil {
		return nil, err
	}
	return idempotency.NewSealed(cache, secret)
}

// keyedWritesSecret picks the secret the sealed answers' keys derive from:
// QUITA_MASTER_KEY, the key that already seals webhook secrets and PSP
// credentials at rest; else QUITA_JWT_SECRET, which every process of a
// deployment must share already; else a random one, which keeps answers
// to this process (the embedded default's in-process cache loses nothing
// by it; processes sharing Redis stop sharing these replays, hence the
// warning).
func keyedWritesSecret(cfg Config, log *slog.Logger) ([]byte, error) {
	switch {
	case cfg.MasterKey != "":
		return bcbpix.ParseMasterKey(cfg.MasterKey)
	case cfg.JWTSecret != "":
		if len(cfg.JWTSecret) < idempotency.MinSealSecretLen {
			return nil, fmt.Errorf("QUITA_JWT_SECRET must be at least %d bytes", idempotency.MinSealSecretLen)
		}
		return []byte(cfg.JWTSecret), nil
	}
	if cfg.RedisURL != "" && !cfg.AdminOnly {
		log.Warn("neither QUITA_MASTER_KEY nor QUITA_JWT_SECRET is set: an Idempotency-Key on a POST other than a money write is honoured by this process only")
	}
	secret := make([]byte, idempotency.MinSealSecretLen)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails (Go ≥ 1.24)
	return secret, nil
}

// hotPath is how the request path talks to Redis — the rate limits and
// the idempotency claims: through go-redis's autopipeliner, which sends
// the commands that concurrent requests issue while one batch is on the
// wire as the next single pipeline (one write, one read, one wake-up of
// Redis for many requests; docs/performance.md). A lone request still
// goes out at once. Each command keeps its own result and error; its
// wait is bounded by the client's read and write timeouts, not by its
// context's deadline (provideRedis). Closing client closes it.
//
// It is the deferred face (AsyncAutoPipeline), the one a live create's
// cob intent is sent on without waiting (provideCobIntents): a call
// returns at once and reading its result waits for it, so a caller that
// reads every result, as these adapters do, sees a blocking client. One
// face means one ordered stream: the intent a create submits just before
// its claim goes in the claim's batch and is answered with it, where two
// faces sent them on two connections and the create waited for the
// slower (docs/performance.md).
func hotPath(client redis.UniversalClient, log *slog.Logger) redis.Cmdable {
	ap, err := client.AsyncAutoPipeline()
	if err != nil {
		// Only an invalid configuration fails, and the default is valid.
		log.Warn("redis autopipelining unavailable, one round trip per command", "err", err)
		return client
	}
	return ap
}

type redisPinger struct{ c redis.UniversalClient }

func (p redisPinger) Ping(ctx context.Context) error { return p.c.Ping(ctx).Err() }
