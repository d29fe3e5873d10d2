package store

import (
	"context"
	"net/url"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
)

// Quita's sessions ask the kernel to write back what their backends write
// every 256 kB (DefaultBackendFlushAfter) and never JIT-compile a query, on
// both pools; a DSN that names either setting wins.
func TestSessionDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	for _, c := range []struct {
		setting, dsn, want string
	}{
		{"backend_flush_after", dsn, "256kB"},
		{"backend_flush_after", withParam(t, dsn, "backend_flush_after", "0"), "0"},
		{"jit", dsn, "off"},
		{"jit", withParam(t, dsn, "jit", "on"), "on"},
	} {
		db, err := Open(ctx, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var viaBun, viaFast string
		if err := db.bun.QueryRowContext(ctx, "SHOW "+c.setting).Scan(&viaBun); err != nil {
			t.Fatal(err)
		}
		conn, err := fastPool(db).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = conn.QueryRow(ctx, "SHOW "+c.setting).Scan(&viaFast)
		conn.Release()
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if viaBun != c.want || viaFast != c.want {
			t.Errorf("DSN %s: %s %q (pool) and %q (pgfast pool), want %q", redactDSN(c.dsn), c.setting, viaBun, viaFast, c.want)
		}
	}
}

func withParam(t *testing.T, dsn, name, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}
