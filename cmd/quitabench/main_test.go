package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/internal/testenv"
)

// The benchmark's clean-up runs after the run's context is cancelled; it
// must still remove the run's keys (each create's cached answer would
// otherwise stay 24 h) and redis_rate's, and nothing outside the prefix.
func TestCleanRedisRemovesTheRunsKeysAfterCancel(t *testing.T) {
	url, base := testenv.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	prefix, keep, rate := base+"run:", base+"other:idem:x", "rate:"+base+"run:rl:k"
	t.Cleanup(func() { rdb.Del(context.Background(), rate) }) // outside testenv's prefix
	pipe := rdb.Pipeline()
	for i := range 2500 { // more than one UNLINK batch
		pipe.Set(ctx, prefix+"idem:"+strconv.Itoa(i), "v", 0)
	}
	pipe.Set(ctx, rate, "v", 0)
	pipe.Set(ctx, keep, "v", 0)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cleanRedis(cancelled, url, prefix)

	for _, pattern := range []string{prefix + "*", "rate:" + prefix + "*"} {
		n := 0
		iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		if err := iter.Err(); err != nil || n != 0 {
			t.Errorf("%d keys left under %s (err %v)", n, pattern, err)
		}
	}
	if n, err := rdb.Exists(ctx, keep).Result(); err != nil || n != 1 {
		t.Errorf("a key outside the run's prefix was removed (exists %d, err %v)", n, err)
	}
}
