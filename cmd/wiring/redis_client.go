package wiring

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// redisDefaults are the settings Quita's Redis connections take unless
// QUITA_REDIS_URL's query names them. Redis is a fast path with a fallback
// everywhere: fail in a fraction of a second and never retry on the request
// path. The read and write timeouts are what bound a command of the hot
// path against a Redis that accepts and never answers: an autopipelined
// command waits for its batch whatever its context's deadline
// (idempotency's TestGuardedRedisRefusedAndHanging). One dial attempt:
// go-redis's default is five, 100 ms apart, and an autopipelined command
// waits them out, so a Redis that refused connections held the call that
// found it down ~0.8 s before the breaker opened (TestRedisDownFailsFast).
// RESP2: Quita subscribes to nothing, and under RESP3 go-redis looks for
// push notifications before every reply it reads (~2 % of the create
// path's CPU).
var redisDefaults = []struct{ name, value string }{
	{"dial_timeout", "200ms"},
	{"read_timeout", "200ms"},
	{"write_timeout", "200ms"},
	{"max_retries", "-1"},
	{"protocol", "2"},
}

// newRedisClient opens the Redis that QUITA_REDIS_URL names, in one of
// go-redis's three URL forms:
//
//	redis://[user:pass@]host:port/db                  one server
//	redis://sentinel1:port?master_name=NAME&addr=sentinel2:port&addr=…/db
//	                                                  Redis Sentinel (the addresses are the sentinels')
//	redis://node1:port?addr=node2:port&addr=…         Redis Cluster (several addresses, or cluster=true)
//
// (rediss:// for TLS). Every form takes redisDefaults; the Sentinel client
// follows the master the sentinels name, the Cluster client the slots'
// owners, each through go-redis's UniversalClient.
func newRedisClient(rawURL string) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("QUITA_REDIS_URL: not a URL") // never echo it: it may hold a password
	}
	q := u.Query()
	for _, d := range redisDefaults {
		if !q.Has(d.name) {
			q.Set(d.name, d.value)
		}
	}
	cluster := q.Get("cluster") == "true" || (len(q["addr"]) > 0 && !q.Has("master_name"))
	q.Del("cluster")
	u.RawQuery = q.Encode()
	switch {
	case q.Has("master_name"):
		opts, err := redis.ParseFailoverURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("QUITA_REDIS_URL (sentinel): %w", err)
		}
		opts.ContextTimeoutEnabled, opts.DialerRetries = true, 1
		return redis.NewFailoverClient(opts), nil
	case cluster:
		opts, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("QUITA_REDIS_URL (cluster): %w", err)
		}
		opts.ContextTimeoutEnabled, opts.DialerRetries = true, 1
		return redis.NewClusterClient(opts), nil
	default:
		opts, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("QUITA_REDIS_URL: %w", err)
		}
		opts.ContextTimeoutEnabled, opts.DialerRetries = true, 1 // the callers' deadlines (idempotency.Guarded) bound each plain command
		return redis.NewClient(opts), nil
	}
}
