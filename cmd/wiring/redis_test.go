package wiring

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// TestRedisSpeaksRESP2: the hot path's connections speak RESP2 (under
// RESP3 go-redis looks for push notifications before every reply, which
// Quita never subscribes to), unless QUITA_REDIS_URL asks otherwise.
func TestRedisSpeaksRESP2(t *testing.T) {
	t.Parallel()
	base, _ := testenv.RedisURL(t)
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	for query, want := range map[string]int{"": 2, sep + "protocol=3": 3} {
		client, closeClient, err := provideRedis(context.Background(), Config{RedisURL: base + query})
		if err != nil {
			t.Fatal(err)
		}
		info, err := client.ClientInfo(context.Background()).Result()
		closeClient()
		if err != nil {
			t.Fatal(err)
		}
		if info.Resp != want {
			t.Errorf("URL query %q: the connection speaks RESP%d, want RESP%d", query, info.Resp, want)
		}
	}
}

// TestRedisDownFailsFast: a claim through quitad's wiring (provideRedis,
// provideCache) against a Redis that refuses connections, or accepts and
// never answers, fails within a fraction of a second, and the breaker
// keeps the calls after it from waiting at all.
func TestRedisDownFailsFast(t *testing.T) {
	t.Parallel()
	hanging, _ := testenv.HangingServer(t)
	for name, c := range map[string]struct {
		addr   string
		within time.Duration
	}{
		// one failed dial; go-redis's five attempts took ~0.8 s
		"refused": {"127.0.0.1:1", 300 * time.Millisecond},
		// the first claim waits out the client's 200 ms timeouts
		// (~0.4 s; go-redis's default read timeout alone is 3 s), the
		// breaker refuses the rest at once
		"hanging": {hanging, 2 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, closeClient, err := provideRedis(context.Background(), Config{RedisURL: "redis://" + c.addr})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(closeClient)
			cache := provideCache(Config{}, client, nil)
			start := time.Now()
			for i := range 20 {
				if _, err := cache.Begin(context.Background(), "k", "fp", time.Second); !errors.Is(err, ports.ErrCacheUnavailable) {
					t.Fatalf("claim %d: %v, want the cache unavailable", i, err)
				}
			}
			if d := time.Since(start); d > c.within {
				t.Errorf("20 claims took %v, want at most %v", d, c.within)
			}
		})
	}
}

// TestClaimsAndIntentsShareOneStream: the claims and rate limits (hotPath)
// go on the very autopipeliner a live create's cob intent is sent on, so
// the intent submitted just before its claim travels in the claim's batch
// (docs/performance.md). Nothing is sent to Redis.
func TestClaimsAndIntentsShareOneStream(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { client.Close() })
	intents, ok := provideCobIntents(Config{}, client, provideCache(Config{}, client, nil)).(*idempotency.RedisIntents)
	if !ok || intents.Async == nil {
		t.Fatalf("cob intents %T without an autopipeliner to send on", intents)
	}
	if hot := hotPath(client, slog.Default()); hot != redis.Cmdable(intents.Async) {
		t.Errorf("the hot path is %T %p, the intents are sent on %p: two streams", hot, hot, intents.Async)
	}
}
