package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/quitapix/quita/ports"
)

// bun writes every value into the statement's text, and when a value's
// appender fails — dbTime.AppendQuery for an instant outside
// ports.MinTime–MaxTime, a string holding NUL, a driver.Valuer's error —
// it does not fail the query: it writes appendErrorMark, the error's text
// and ")" where the value belongs (dialect.AppendError) and runs the
// statement, which the database then refuses as a syntax error, after
// the error's text reached the server and its log. Every connection the
// store opens through database/sql is a guardedConn, which refuses such a
// statement with ports.ErrUnstorableValue before a byte of it is sent.
// (The statements of adapters/store/pgfast carry values as parameters and
// check instants while encoding them.)
const appendErrorMark = "?!("

// errUnstorable is a statement guardedConn refused. It names neither the
// statement nor the value: either may hold a merchant's or a payer's data.
var errUnstorable = fmt.Errorf("%w: a value could not be written into the statement, which was not run", ports.ErrUnstorableValue)

// unencodable reports whether query holds bun's mark of a value it could
// not write, outside any quoted literal or identifier: inside one the
// same characters are data (a description "?!(") that bun quoted. Quoted
// text is '…' or "…" with the quote doubled inside, as bun writes it
// (standard_conforming_strings is on, so a backslash escapes nothing).
func unencodable(query string) bool {
	if !strings.Contains(query, appendErrorMark) {
		return false
	}
	for i := 0; i < len(query); i++ {
		switch q := query[i]; q {
		case '\'', '"':
			for i++; i < len(query); i++ {
				if query[i] != q {
					continue
				}
				if i+1 < len(query) && query[i+1] == q {
					i++
					continue
				}
				break
			}
		case appendErrorMark[0]:
			if strings.HasPrefix(query[i:], appendErrorMark) {
				return true
			}
		}
	}
	return false
}

// guardedConnector opens guardedConns.
type guardedConnector struct{ driver.Connector }

func (c guardedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return guardedConn{conn}, nil
}

// guardedConn is a driver connection that refuses unencodable statements
// and passes everything else to the connection it wraps. Where that
// connection lacks one of database/sql's optional interfaces, each method
// does what database/sql does without it.
type guardedConn struct{ driver.Conn }

var (
	_ driver.ExecerContext      = guardedConn{}
	_ driver.QueryerContext     = guardedConn{}
	_ driver.ConnPrepareContext = guardedConn{}
	_ driver.ConnBeginTx        = guardedConn{}
	_ driver.Pinger             = guardedConn{}
	_ driver.SessionResetter    = guardedConn{}
	_ driver.Validator          = guardedConn{}
	_ driver.NamedValueChecker  = guardedConn{}
)

func (c guardedConn) Prepare(query string) (driver.Stmt, error) {
	if unencodable(query) {
		return nil, errUnstorable
	}
	return c.Conn.Prepare(query)
}

func (c guardedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if unencodable(query) {
		return nil, errUnstorable
	}
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.Conn.Prepare(query)
}

func (c guardedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if unencodable(query) {
		return nil, errUnstorable
	}
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip // database/sql prepares it instead
}

func (c guardedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if unencodable(query) {
		return nil, errUnstorable
	}
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c guardedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	if opts.Isolation != 0 || opts.ReadOnly {
		return nil, errors.New("store: the driver supports neither isolation levels nor read-only transactions")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	//lint:ignore SA1019 database/sql falls back to Begin the same way
	return c.Conn.Begin()
}

func (c guardedConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c guardedConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c guardedConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c guardedConn) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip // database/sql's default conversion
}
