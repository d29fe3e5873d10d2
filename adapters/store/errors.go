package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// tableIdempotency is the one table whose unique key means "this request
// was already made" rather than "this value is taken".
const tableIdempotency = "idempotency_records"

// mapError is the one place that turns driver errors into the ports'
// sentinels. Every query's error passes through it. Any other error is
// returned as it is, so mapping twice changes nothing.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ports.ErrNotFound
	}
	if walletCheckViolation(err) {
		// A wallet would go negative: the debit cannot be covered.
		return domain.ErrInsufficientBalance
	}
	if table, ok := uniqueViolation(err); ok {
		if table == tableIdempotency {
			return ports.ErrIdempotencyKeyExists
		}
		return fmt.Errorf("%w: %s", ports.ErrDuplicate, table)
	}
	if unavailable(err) && !errors.Is(err, ports.ErrStoreUnavailable) {
		return fmt.Errorf("%w: %w", ports.ErrStoreUnavailable, err)
	}
	return err
}

// unavailable reports an error of reaching the database rather than of
// the statement: the connection is gone or cannot be had. Postgres's
// class 08 (connection exception), 57P01–57P03 (shutting down, cannot
// connect now), 53300 (too many connections), 25006 (a write reached a
// server that is read-only: a member restarting or demoted during a
// failover, which the balancer has not yet taken out); a failed connect; a
// connection that died mid-statement; a deadline. Within a transaction
// any of them means it did not commit.
func unavailable(err error) bool {
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true // whatever the server said: starting up, shutting down, database not accepting connections
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300" || pgErr.Code == "25006"
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, context.DeadlineExceeded) ||
		pgconn.Timeout(err) || strings.Contains(err.Error(), "conn closed")
}

// SQLite extended result codes of a unique violation.
const (
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

// uniqueViolation reports whether err is a unique-key violation and on
// which table.
func uniqueViolation(err error) (table string, ok bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.TableName, pgErr.Code == "23505"
	}
	// SQLite, either driver. modernc's error has Code(); mattn's has
	// fields instead. Both say "UNIQUE constraint failed: table.column, ..."
	// (also for primary keys), which is where the table name is.
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		if c := coded.Code(); c != sqliteConstraintUnique && c != sqliteConstraintPrimaryKey {
			return "", false
		}
	}
	const marker = "UNIQUE constraint failed: "
	msg := err.Error()
	i := strings.Index(msg, marker)
	if i < 0 {
		return "", false
	}
	table, _, _ = strings.Cut(msg[i+len(marker):], ".")
	return table, true
}

// walletCheckViolation reports a CHECK violation on wallet_balances (the
// non-negative available, pending and owed).
func walletCheckViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23514" && pgErr.TableName == "wallet_balances"
	}
	msg := err.Error()
	return strings.Contains(msg, "CHECK constraint failed") && (strings.Contains(msg, "available") || strings.Contains(msg, "pending") ||
		strings.Contains(msg, "owed"))
}
