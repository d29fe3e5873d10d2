package wiring

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/ports"
)

// Processes with the same QUITA_MASTER_KEY, or else the same
// QUITA_JWT_SECRET, replay each other's sealed answers; without either,
// each process keeps its own; a JWT secret too short to derive from is a
// start-up error.
func TestKeyedWritesSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	master := strings.Repeat("ab", 32)
	jwt := strings.Repeat("j", 40)
	for _, tc := range []struct {
		name   string
		a, b   Config
		shared bool
	}{
		{"master key", Config{MasterKey: master, JWTSecret: jwt}, Config{MasterKey: master, JWTSecret: "another-jwt-secret-of-forty-bytes-long!!"}, true},
		{"jwt secret", Config{JWTSecret: jwt}, Config{JWTSecret: jwt}, true},
		{"master key over jwt secret", Config{MasterKey: master, JWTSecret: jwt}, Config{JWTSecret: jwt}, false},
		{"neither", Config{RedisURL: "redis://x"}, Config{RedisURL: "redis://x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inner := idempotency.NewMemory(time.Now) // the cache both processes share
			a, err := provideKeyedWrites(tc.a, inner, log)
			if err != nil {
				t.Fatal(err)
			}
			b, err := provideKeyedWrites(tc.b, inner, log)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Complete(ctx, "scope\x00key-0001", "fp", 201, []byte(`{"secret":"s"}`), time.Hour); err != nil {
				t.Fatal(err)
			}
			c, err := b.Begin(ctx, "scope\x00key-0001", "fp", time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.State == ports.ClaimCompleted && string(c.Body) == `{"secret":"s"}`; got != tc.shared {
				t.Fatalf("second process: %+v, want shared=%v", c, tc.shared)
			}
		})
	}
	if _, err := provideKeyedWrites(Config{JWTSecret: "short"}, idempotency.NewMemory(time.Now), log); err == nil {
		t.Error("a 5-byte QUITA_JWT_SECRET was accepted")
	}
}
