package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quitapix/quita/ports"
)

// Losing the database is "unavailable, retry later",
// never an internal error; statement errors stay what they are.
func TestMapErrorUnavailable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true}, // admin shutdown (restart, pg_terminate_backend)
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot connect now (starting up)
		{&pgconn.PgError{Code: "53300"}, true}, // too many connections
		{&pgconn.PgError{Code: "08006"}, true}, // connection failure
		{&pgconn.PgError{Code: "25006"}, true}, // a write on a read-only member (failover)
		{fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true},
		{context.DeadlineExceeded, true},
		// A failed connect wraps whatever refused it (a closed port here; a
		// database not accepting connections, 55000, in the chaos run).
		{connectError(t), true},
		{&pgconn.PgError{Code: "23503"}, false}, // foreign key: a bug, not an outage
		{&pgconn.PgError{Code: "42P01"}, false},
		{errors.New("boom"), false},
	} {
		got := errors.Is(mapError(tc.err), ports.ErrStoreUnavailable)
		if got != tc.want {
			t.Errorf("%v: unavailable %v, want %v", tc.err, got, tc.want)
		}
	}
}

func connectError(t *testing.T) error {
	t.Helper()
	_, err := pgconn.Connect(t.Context(), "postgres://postgres@127.0.0.1:1/none?connect_timeout=2")
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("want a ConnectError, got %v", err)
	}
	return err
}
