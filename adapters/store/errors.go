package store

import (
	"database/sql"
	"errors"
	"fmt"
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
	return err
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
// non-negative available and pending).
func walletCheckViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23514" && pgErr.TableName == "wallet_balances"
	}
	msg := err.Error()
	return strings.Contains(msg, "CHECK constraint failed") && (strings.Contains(msg, "available") || strings.Contains(msg, "pending"))
}
