package idempotency_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// newRedisClient connects to the test Redis and returns a client with the
// key prefix this test owns.
func newRedisClient(t *testing.T) (*redis.Client, string) {
	t.Helper()
	url, prefix := testenv.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client, prefix
}

func TestRedisContract(t *testing.T) {
	t.Parallel()
	testRedisContract(t, func(c *redis.Client) redis.Cmdable { return c })
}

// The server talks to Redis through go-redis's autopipeliner, its
// deferred face (cmd/wiring: hotPath); the cache keeps its contract over
// either face.
func TestRedisContractAutoPipelined(t *testing.T) {
	t.Parallel()
	for name, face := range autopipeliners {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testRedisContract(t, func(c *redis.Client) redis.Cmdable {
				ap, err := face(c)
				if err != nil {
					t.Fatal(err)
				}
				return ap
			})
		})
	}
}

// autopipeliners are go-redis's two autopipelined faces of a client: the
// blocking one, and the deferred one the server uses (cmd/wiring: hotPath),
// whose calls return at once and whose results wait when read.
var autopipeliners = map[string]func(*redis.Client) (*redis.AutoPipeliner, error){
	"blocking": (*redis.Client).AutoPipeline,
	"deferred": (*redis.Client).AsyncAutoPipeline,
}

func testRedisContract(t *testing.T, face func(*redis.Client) redis.Cmdable) {
	testContract(t, func(t *testing.T) harness {
		client, prefix := newRedisClient(t)
		return harness{
			cache:    idempotency.NewRedis(face(client), prefix),
			shortTTL: 200 * time.Millisecond,
			// Redis expires keys on its own clock; a margin covers its
			// millisecond rounding.
			elapse: func(d time.Duration) { time.Sleep(d + 50*time.Millisecond) },
		}
	})
}

func TestRedisStoresCompactValuesUnderThePrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, prefix := newRedisClient(t)
	cache := idempotency.NewRedis(client, prefix+"idem:")

	if _, err := cache.Begin(ctx, "acct_1:live:key-1", fpA, time.Minute); err != nil {
		t.Fatal(err)
	}
	key := prefix + "idem:acct_1:live:key-1"
	if n, err := client.StrLen(ctx, key).Result(); err != nil || n > int64(len(fpA))+4 {
		t.Errorf("in-flight value: %d bytes, err %v; want at most fingerprint + 4", n, err)
	}
	ttl, err := client.PTTL(ctx, key).Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Errorf("in-flight PTTL = %v, %v; want within the lock TTL", ttl, err)
	}

	body := bytes.Repeat([]byte(`{"brcode":"000201"}`), 200) // ~4 KB
	if err := cache.Complete(ctx, "acct_1:live:key-1", fpA, 201, body, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if n, err := client.StrLen(ctx, key).Result(); err != nil || n > int64(len(body)+len(fpA))+8 {
		t.Errorf("done value: %d bytes, err %v; want at most body + fingerprint + 8", n, err)
	}
	ttl, err = client.PTTL(ctx, key).Result()
	if err != nil || ttl <= time.Hour {
		t.Errorf("done PTTL = %v, %v; want about the response TTL (24h)", ttl, err)
	}
}

func TestRedisForeignValueIsAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, prefix := newRedisClient(t)
	cache := idempotency.NewRedis(client, prefix)

	if err := client.Set(ctx, prefix+"k", "not ours", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	// The caller treats the error as a cache miss and relies on the
	// database; the value is left for its owner.
	if claim, err := cache.Begin(ctx, "k", fpA, time.Minute); err == nil {
		t.Fatalf("Begin over a foreign value = %+v, want an error", claim)
	}
	if err := cache.Release(ctx, "k", fpA); err != nil {
		t.Fatal(err)
	}
	if v, _ := client.Get(ctx, prefix+"k").Result(); v != "not ours" {
		t.Errorf("foreign value became %q", v)
	}
}

func TestRedisUnreachableIsAnError(t *testing.T) {
	t.Parallel()
	// Port 1 on loopback refuses at once; nothing leaves the machine.
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = client.Close() })
	cache := idempotency.NewRedis(client, "x:")
	ctx := context.Background()

	if _, err := cache.Begin(ctx, "k", fpA, time.Minute); err == nil {
		t.Error("Begin: want an error")
	}
	if err := cache.Complete(ctx, "k", fpA, 201, nil, time.Minute); err == nil {
		t.Error("Complete: want an error")
	}
	if err := cache.Release(ctx, "k", fpA); err == nil {
		t.Error("Release: want an error")
	}
}

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fp     string
		status int
		body   []byte
	}{
		{"typical", fpA, 201, []byte(`{"id":"ch_1"}`)},
		{"empty", "", 0, nil},
		{"long fingerprint", strings.Repeat("f", 300), 65535, []byte{0, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw, err := idempotency.EncodeDone(tc.fp, tc.status, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := idempotency.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != ports.ClaimCompleted || got.Fingerprint != tc.fp || got.StatusCode != tc.status || !bytes.Equal(got.Body, tc.body) {
				t.Errorf("round trip = %+v", got)
			}

			got, err = idempotency.Decode(idempotency.EncodeInFlight(tc.fp))
			if err != nil || got.State != ports.ClaimInFlight || got.Fingerprint != tc.fp {
				t.Errorf("in-flight round trip = %+v, %v", got, err)
			}
		})
	}

	for _, status := range []int{-1, 65536} {
		if _, err := idempotency.EncodeDone(fpA, status, nil); err == nil {
			t.Errorf("EncodeDone(status %d): want an error", status)
		}
		if _, err := idempotency.EncodeInRecord(fpA, status); err == nil {
			t.Errorf("EncodeInRecord(status %d): want an error", status)
		}
	}
	inRecord, err := idempotency.EncodeInRecord(fpA, 201)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := idempotency.Decode(inRecord); err != nil || got.State != ports.ClaimCompleted || !got.InRecord ||
		got.Fingerprint != fpA || got.StatusCode != 201 || got.Body != nil {
		t.Errorf("in-record round trip = %+v, %v", got, err)
	}
	if len(inRecord) >= 4+len(fpA)+1 {
		t.Errorf("an in-record value is %d bytes for a %d-byte fingerprint", len(inRecord), len(fpA))
	}
	if _, err := idempotency.Decode(inRecord[:3]); err == nil {
		t.Error("a truncated in-record value decoded")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("not ours"))
	f.Add(idempotency.EncodeInFlight(fpA))
	done, _ := idempotency.EncodeDone(fpA, 201, []byte(`{"id":"ch_1"}`))
	f.Add(done)
	inRecord, _ := idempotency.EncodeInRecord(fpA, 201)
	f.Add(inRecord)
	f.Add([]byte{1, 2, 0, 201, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, raw []byte) {
		claim, err := idempotency.Decode(raw)
		if err != nil {
			return
		}
		switch claim.State {
		case ports.ClaimInFlight:
			if !bytes.Equal(idempotency.EncodeInFlight(claim.Fingerprint), raw) {
				t.Errorf("in-flight %q does not re-encode to itself", raw)
			}
		case ports.ClaimCompleted:
			if claim.InRecord {
				if again, _ := idempotency.EncodeInRecord(claim.Fingerprint, claim.StatusCode); !bytes.Equal(again, raw) || claim.Body != nil {
					t.Errorf("in-record %q does not re-encode to itself", raw)
				}
				return
			}
			if _, err := idempotency.EncodeDone(claim.Fingerprint, claim.StatusCode, claim.Body); err != nil {
				t.Errorf("decoded %+v does not encode: %v", claim, err)
			}
		default:
			t.Errorf("decoded state %d", claim.State)
		}
	})
}
