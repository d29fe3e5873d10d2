package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// resetSession runs before database/sql hands out a pooled connection
// again. A Postgres connection that sat in the pool while its backend was
// terminated (a restart, pg_terminate_backend, an idle timeout at a proxy)
// has the server's farewell or an EOF waiting on its socket; sending a
// statement on it would fail and, inside a write, leave the caller unsure
// what happened. Peeking at the socket costs one non-blocking system call
// and no round trip: anything readable on an idle connection means it is
// finished, so it is discarded (driver.ErrBadConn) and database/sql takes
// or opens another before any byte of the statement is sent.
func resetSession(_ context.Context, c *pgx.Conn) error {
	if !idleConnAlive(c.PgConn().Conn()) {
		return driver.ErrBadConn
	}
	return nil
}

// idleConnAlive reports false when an idle connection's socket is readable
// (data or EOF) or broken; true when it would block, or when there is no
// socket to inspect (socketOf: no check is made). Under TLS the socket is
// the one below the TLS layer: the server's farewell arrives there as a
// TLS record and an EOF, and nothing else does on an idle connection (a
// session ticket, if the server sends one, comes before its answer to the
// startup message, which pgx read while connecting).
func idleConnAlive(conn net.Conn) bool {
	sc, ok := socketOf(conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	alive := true
	var buf [1]byte
	// Control, not Read: it takes no read lock on the descriptor, so the
	// peek can never wait behind a reader pgx may still have on it.
	_ = rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		case err != nil, n >= 0:
			alive = false // pending bytes, EOF (n == 0) or a socket error
		}
	})
	return alive
}

// socketOf is the socket a connection pgx opened is sent on: the
// connection itself over TCP or a Unix socket, the connection under the
// TLS layer (tls.Conn.NetConn) with sslmode require, verify-* or a
// prefer the server accepted. ok is false when there is none to inspect.
func socketOf(conn net.Conn) (sc syscall.Conn, ok bool) {
	// A few layers at most; the bound keeps a wrapper that returns
	// itself from looping.
	for range 4 {
		if sc, ok = conn.(syscall.Conn); ok {
			return sc, true
		}
		w, wraps := conn.(interface{ NetConn() net.Conn })
		if !wraps {
			return nil, false
		}
		conn = w.NetConn()
	}
	return nil, false
}
