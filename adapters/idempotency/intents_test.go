package idempotency_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/domain"
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
	members, err := client.ZRange(ctx, prefix+"cobintents", 0, -1).Result()
	if err != nil || len(members) != 3 || strings.Contains(strings.Join(members, ","), "the-merchants-key") {
		t.Fatalf("members %q %v", members, err)
	}

	if err := r.DropCobIntent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := r.DropCobIntent(ctx, a); err != nil { // none: succeeds
		t.Fatal(err)
	}
	// A member this package did not write is dropped, not returned.
	if err := client.ZAdd(ctx, prefix+"cobintents", redisZ(t0, "not|an intent")).Err(); err != nil {
		t.Fatal(err)
	}
	got, err = r.CobIntentsBefore(ctx, t0.Add(time.Hour), 10)
	if err != nil || len(got) != 2 || got[0].TxID != b.TxID || got[1].TxID != c.TxID {
		t.Fatalf("after the drop: %+v %v", got, err)
	}
	if n, _ := client.ZCard(ctx, prefix+"cobintents").Result(); n != 2 {
		t.Fatalf("%d members left, want the two intents", n)
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	client := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), MaxRetries: -1, ReadTimeout: 10 * time.Second, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	r := idempotency.NewRedisIntents(client, "x:")
	r.Timeout = 100 * time.Millisecond
	start := time.Now()
	err = r.RecordCobIntent(t.Context(), ports.ProviderIntent{TxID: domain.DeriveTxID("x"), CreatedAt: time.Now()})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("record on a hanging Redis: %v after %v", err, time.Since(start))
	}
}
