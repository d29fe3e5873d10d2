package pgfast

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quitapix/quita/ports"
)

// A write whose connection died under it runs once more on
// another; any other failure is answered as it is.
func TestRetryLostConn(t *testing.T) {
	lost := &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}
	for _, tt := range []struct {
		name  string
		first error
		calls int
	}{
		{"terminated backend", fmt.Errorf("%w: %w", ports.ErrStoreUnavailable, lost), 2},
		{"connection closed", errors.New("conn closed"), 2},
		{"unexpected EOF", io.ErrUnexpectedEOF, 2},
		{"no connection free in time", fmt.Errorf("%w: no database connection free within 10s", ports.ErrStoreUnavailable), 1},
		{"deadline", context.DeadlineExceeded, 1},
		{"key used", ports.ErrIdempotencyKeyExists, 1},
		{"success", nil, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := RetryLostConn(func() error {
				calls++
				if calls == 1 {
					return tt.first
				}
				return nil
			})
			if calls != tt.calls {
				t.Errorf("%d runs, want %d", calls, tt.calls)
			}
			if tt.calls == 2 && err != nil {
				t.Errorf("the second run succeeded, yet: %v", err)
			}
			if tt.calls == 1 && !errors.Is(err, tt.first) {
				t.Errorf("err %v, want %v", err, tt.first)
			}
		})
	}
}
