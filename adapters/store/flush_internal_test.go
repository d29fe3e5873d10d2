package store

import (
	"context"
	"net/url"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
)

// Quita's sessions ask the kernel to write back what their backends write
// every 256 kB (DefaultBackendFlushAfter), on both pools; a DSN that names
// backend_flush_after wins.
func TestBackendFlushAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	for want, dsn := range map[string]string{"256kB": dsn, "0": withParam(t, dsn, "backend_flush_after", "0")} {
		db, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var viaBun, viaHot string
		if err := db.bun.QueryRowContext(ctx, "SHOW backend_flush_after").Scan(&viaBun); err != nil {
			t.Fatal(err)
		}
		if err := db.hot.QueryRow(ctx, "SHOW backend_flush_after").Scan(&viaHot); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if viaBun != want || viaHot != want {
			t.Errorf("DSN %s: backend_flush_after %q (pool) and %q (hot pool), want %q", redactDSN(dsn), viaBun, viaHot, want)
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
