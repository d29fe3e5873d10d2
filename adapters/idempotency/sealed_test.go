package idempotency_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/ports"
)

var sealSecret = bytes.Repeat([]byte{0x5a}, idempotency.MinSealSecretLen)

func mustSealed(t *testing.T, inner ports.IdempotencyCache, secret []byte) *idempotency.Sealed {
	t.Helper()
	s, err := idempotency.NewSealed(inner, secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Sealed keeps the cache contract of what it wraps, in process and in Redis.
func TestSealedMemoryContract(t *testing.T) {
	t.Parallel()
	testContract(t, func(t *testing.T) harness {
		clock := newFakeClock()
		return harness{
			cache:    mustSealed(t, idempotency.NewMemory(clock.Now), sealSecret),
			shortTTL: 200 * time.Millisecond,
			elapse:   clock.Advance,
		}
	})
}

func TestSealedRedisContract(t *testing.T) {
	t.Parallel()
	testContract(t, func(t *testing.T) harness {
		client, prefix := newRedisClient(t)
		return harness{
			cache:    mustSealed(t, idempotency.NewRedis(client, prefix), sealSecret),
			shortTTL: 200 * time.Millisecond,
			elapse:   func(d time.Duration) { time.Sleep(d + 50*time.Millisecond) },
		}
	})
}

// What lands in Redis names neither the scope nor the merchant's key, and
// holds the body only sealed; the right secret opens it, another does not
// even find it.
func TestSealedRedisHoldsNoCleartext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, prefix := newRedisClient(t)
	inner := idempotency.NewRedis(client, prefix)
	cache := mustSealed(t, inner, sealSecret)

	const key = "acct_sealed\x00test\x00merchant-key-0001"
	secret := "whsec-cleartext-4f1d2c3b4a5968778695a4b3c2d1e0f9"
	body := []byte(`{"id":"we_1","secret":"` + secret + `"}`)
	if _, err := cache.Begin(ctx, key, fpA, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := cache.Complete(ctx, key, fpA, 201, body, time.Hour); err != nil {
		t.Fatal(err)
	}

	names, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil || len(names) != 1 {
		t.Fatalf("keys %v, %v; want one", names, err)
	}
	raw, err := client.Get(ctx, names[0]).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"acct_sealed", "merchant-key-0001", secret, `"id":"we_1"`} {
		if strings.Contains(names[0], leak) || bytes.Contains(raw, []byte(leak)) {
			t.Errorf("Redis holds %q in clear (key %q)", leak, names[0])
		}
	}

	got, err := cache.Begin(ctx, key, fpA, time.Minute)
	if err != nil || got.State != ports.ClaimCompleted || got.StatusCode != 201 || !bytes.Equal(got.Body, body) {
		t.Fatalf("replay = %+v, %v; want 201 with the original body", got, err)
	}

	other := bytes.Repeat([]byte{0x33}, idempotency.MinSealSecretLen)
	if c, err := mustSealed(t, inner, other).Begin(ctx, key, fpA, time.Minute); err != nil || c.State != ports.ClaimAcquired {
		t.Errorf("another secret: %+v, %v; want a fresh claim on an entry of its own", c, err)
	}
}

// A body changed in the cache, given another status, or copied from
// another entry fails to open: the caller gets an error, never altered bytes.
func TestSealedRefusesATamperedBody(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spy := &spyCache{Cache: idempotency.NewMemory(time.Now)}
	cache := mustSealed(t, spy, sealSecret)

	if err := cache.Complete(ctx, "k-0000002", fpA, 201, []byte(`{"apiKey":"qt_live_y"}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	other := bytes.Clone(spy.body) // sealed for another entry, same fingerprint and status
	if err := cache.Complete(ctx, "k-0000001", fpA, 201, []byte(`{"apiKey":"qt_live_x"}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(spy.body, []byte("qt_live_x")) {
		t.Fatal("the inner cache got the cleartext")
	}
	orig := *spy
	for name, tamper := range map[string]func(body []byte, status int) ([]byte, int){
		"flipped byte":  func(b []byte, st int) ([]byte, int) { b[len(b)-1] ^= 1; return b, st },
		"other status":  func(b []byte, _ int) ([]byte, int) { return b, 200 },
		"other entry's": func([]byte, int) ([]byte, int) { return bytes.Clone(other), 201 },
	} {
		body, status := tamper(bytes.Clone(orig.body), orig.status)
		if err := spy.Cache.Complete(ctx, orig.name, orig.fp, status, body, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := cache.Begin(ctx, "k-0000001", fpA, time.Minute); !errors.Is(err, idempotency.ErrSealedBody) {
			t.Errorf("%s: err %v, want ErrSealedBody", name, err)
		}
	}

	if _, err := idempotency.NewSealed(spy, []byte("short")); err == nil {
		t.Error("NewSealed took a 5-byte secret")
	}
}

// spyCache remembers the last Complete it passed on.
type spyCache struct {
	ports.IdempotencyCache
	Cache  *idempotency.Memory
	name   string
	fp     string
	status int
	body   []byte
}

func (s *spyCache) Begin(ctx context.Context, key, fp string, ttl time.Duration) (ports.Claim, error) {
	return s.Cache.Begin(ctx, key, fp, ttl)
}

func (s *spyCache) Complete(ctx context.Context, key, fp string, status int, body []byte, ttl time.Duration) error {
	s.name, s.fp, s.status, s.body = key, fp, status, bytes.Clone(body)
	return s.Cache.Complete(ctx, key, fp, status, body, ttl)
}
