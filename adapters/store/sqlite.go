package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/uptrace/bun/driver/sqliteshim"
)

// sqliteConnector opens SQLite connections through sqliteshim (pure-Go
// modernc where available, mattn's cgo driver otherwise) and sets the
// per-connection pragmas itself, because the two drivers spell them
// differently in a DSN.
type sqliteConnector struct {
	dsn     string
	pragmas []string
}

func newSQLiteConnector(path string, memory bool) *sqliteConnector {
	// _txlock=immediate (understood by both drivers) makes every BEGIN a
	// BEGIN IMMEDIATE: a transaction holds the write lock before its first
	// read, so a read-modify-write cannot lose an update to another process
	// and never fails on a lock upgrade.
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	pragmas := []string{
		// Wait for another process's write lock instead of failing at once.
		"PRAGMA busy_timeout = 5000",
		"PRAGMA foreign_keys = ON",
	}
	if !memory {
		// WAL: readers in other processes do not block the writer. It is
		// a property of the file, so setting it on every connection is a
		// no-op after the first.
		pragmas = append(pragmas, "PRAGMA journal_mode = WAL")
	}
	return &sqliteConnector{dsn: path + sep + "_txlock=immediate", pragmas: pragmas}
}

func (c *sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := sqliteshim.Driver().Open(c.dsn)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: open: %w", err)
	}
	execer, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("store: sqlite: driver %T cannot execute statements directly", conn)
	}
	for _, p := range c.pragmas {
		if _, err := execer.ExecContext(ctx, p, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("store: sqlite: %s: %w", p, err)
		}
	}
	return conn, nil
}

func (c *sqliteConnector) Driver() driver.Driver { return sqliteshim.Driver() }
