package store_test

import (
	"testing"
	"time"

	"github.com/quitapix/quita/internal/testenv"
)

// TestWorkerLeases: a lease is taken, renewed by its holder, refused to
// another while it lasts, taken over once it expires, and released only
// by its holder.
func TestWorkerLeases(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := openStore(t, dsn(t))
			ctx := t.Context()
			hold := func(holder string, at time.Duration) bool {
				t.Helper()
				ok, err := db.HoldWorkerLease(ctx, "sweep", holder, baseTime.Add(at), 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			steps := []struct {
				holder string
				at     time.Duration
				want   bool
			}{
				{"a", 0, true}, {"b", time.Second, false}, {"a", 5 * time.Second, true},
				{"b", 14 * time.Second, false}, {"b", 16 * time.Second, true}, {"a", 17 * time.Second, false},
			}
			for _, s := range steps {
				if got := hold(s.holder, s.at); got != s.want {
					t.Fatalf("%s at +%s: %v, want %v", s.holder, s.at, got, s.want)
				}
			}
			if err := db.ReleaseWorkerLease(ctx, "sweep", "a"); err != nil { // not a's: nothing
				t.Fatal(err)
			}
			if hold("a", 18*time.Second) {
				t.Fatal("a took b's lease after releasing what it did not hold")
			}
			if err := db.ReleaseWorkerLease(ctx, "sweep", "b"); err != nil {
				t.Fatal(err)
			}
			if !hold("a", 18*time.Second) {
				t.Fatal("a could not take the released lease")
			}
		})
	}
}
