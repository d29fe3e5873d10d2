package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// pgAdmin is a connection of the test's own to dsn's database, outside
// the store's pools.
func pgAdmin(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	admin, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	return admin
}

// terminateOthers ends every other session on admin's database and waits
// until their backends are gone, so each one's farewell is on its socket.
func terminateOthers(t *testing.T, admin *pgx.Conn) int {
	t.Helper()
	ctx := context.Background()
	rows, err := admin.Query(ctx, `WITH others AS MATERIALIZED (SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid())
		SELECT pid FROM others WHERE pg_terminate_backend(pid)`)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var left int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)`, pids).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			return len(pids)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends outlived pg_terminate_backend", left)
		}
	}
}

// holdConns has n connections of pool open at once, then back in the pool
// idle.
func holdConns(t *testing.T, pool interface {
	Acquire(context.Context) (*pgxpool.Conn, error)
}, n int) {
	t.Helper()
	conns := make([]*pgxpool.Conn, 0, n)
	for range n {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
}

// After Postgres terminated every pooled connection, each one is found
// dead before a statement is sent on it and replaced: requests in a row,
// reads and writes on both pools, all succeed — over TLS as over plain
// TCP, and on a quiet pool no live connection is thrown away.
func TestTerminatedConnectionsAreReplacedBeforeUse(t *testing.T) {
	t.Parallel()
	for _, sslmode := range []string{"disable", "require"} {
		t.Run("sslmode="+sslmode, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := withParam(t, testenv.PostgresDSN(t), "sslmode", sslmode)
			admin := pgAdmin(t, withParam(t, dsn, "sslmode", "disable"))
			if sslmode != "disable" {
				var ssl string
				if err := admin.QueryRow(ctx, "SHOW ssl").Scan(&ssl); err != nil || ssl != "on" {
					t.Skipf("the server does not offer TLS (ssl %q, %v)", ssl, err)
				}
			}
			db, err := Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if sslmode != "disable" {
				var tls bool
				if err := db.bun.QueryRowContext(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&tls); err != nil || !tls {
					t.Fatalf("the store's connection is not over TLS (%v)", err)
				}
			}

			scope := ports.Scope{AccountID: "acct_conncheck", Mode: domain.ModeTest}
			var n atomic.Int64
			create := func() (string, error) {
				c, evs, err := newPixCharge(scope, 1990, "Pedido", time.Now())
				if err != nil {
					return "", err
				}
				return c.ID(), db.CreateCharge(ctx, c, evs, &ports.IdempotencyRecord{
					IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: fmt.Sprint("conncheck-", n.Add(1))},
					Fingerprint:    "fp", ResourceID: c.ID(), StatusCode: 201, Body: []byte(`{}`), CreatedAt: time.Now()})
			}
			charge, err := create()
			if err != nil {
				t.Fatal(err)
			}
			// One request of each kind: a read and a write through
			// database/sql, a read and a create batch on the pool of pgfast.
			requests := []struct {
				name string
				run  func() error
			}{
				{"list events", func() error {
					_, err := db.ListEvents(ctx, ports.EventQuery{Scope: scope, Limit: 5})
					return err
				}},
				{"audit entry", func() error {
					return db.InsertAuditEntry(ctx, ports.AuditEntry{ID: fmt.Sprint("audit_", n.Add(1)), AccountID: scope.AccountID,
						Action: "charge.refused", Code: "fraud.test", CreatedAt: time.Now()})
				}},
				{"get charge", func() error {
					_, err := db.GetCharge(ctx, scope, charge)
					return err
				}},
				{"create charge", func() error {
					_, err := create()
					return err
				}},
			}

			// A quiet pool keeps its live connections: the check does not
			// mistake one for a dead one.
			opened := db.pool.Stat().NewConnsCount() + fastPool(db).Stat().NewConnsCount()
			for i := range 12 {
				if r := requests[i%len(requests)]; r.run() != nil {
					t.Fatalf("%s on a quiet pool failed", r.name)
				}
			}
			if more := db.pool.Stat().NewConnsCount() + fastPool(db).Stat().NewConnsCount() - opened; more > 2 {
				t.Errorf("12 requests in a row on a quiet pool opened %d connections", more)
			}

			for round := range 3 {
				holdConns(t, db.pool, 8)
				holdConns(t, fastPool(db), 4)
				idle := db.pool.Stat().IdleConns() + fastPool(db).Stat().IdleConns()
				if killed := terminateOthers(t, admin); killed < int(idle) {
					t.Fatalf("round %d: %d sessions terminated, fewer than the %d pooled", round, killed, idle)
				}
				var failed []string
				for i := range 16 {
					r := requests[i%len(requests)]
					if err := r.run(); err != nil {
						failed = append(failed, r.name+": "+err.Error())
					}
				}
				if len(failed) > 0 {
					t.Errorf("round %d: %d of 16 requests after the terminations failed:\n%s", round, len(failed), strings.Join(failed, "\n"))
				}
			}
		})
	}
}

// A statement that reached the server and then lost its connection is
// not sent again on another one: it may have had effects (here a
// sequence's nextval, which no rollback undoes), so the caller gets the
// error — ports.ErrStoreUnavailable — and decides.
func TestStatementLostAfterSendingIsNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	admin := pgAdmin(t, dsn)
	if _, err := admin.Exec(ctx, "CREATE SEQUENCE conncheck_probe"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.bun.ExecContext(ctx, "SELECT nextval('conncheck_probe'), pg_sleep(30)")
		done <- err
	}()
	// Terminate the statement's backend once it is running.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var pids []int32
		rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()
			AND query LIKE 'SELECT nextval(''conncheck_probe'')%' AND state = 'active'`)
		if err == nil {
			pids, err = pgx.CollectRows(rows, pgx.RowTo[int32])
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) == 1 {
			if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pids[0]); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the statement never ran")
		}
	}
	select {
	case err := <-done:
		if !errors.Is(mapError(err), ports.ErrStoreUnavailable) {
			t.Errorf("a statement whose connection died under it answered %v, want ErrStoreUnavailable", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the statement was sent again: it is still running")
	}
	var last string
	if err := admin.QueryRow(ctx, "SELECT last_value::text FROM conncheck_probe").Scan(&last); err != nil {
		t.Fatal(err)
	}
	if calls, _ := strconv.Atoi(last); calls != 1 {
		t.Errorf("the statement ran %s times, want once", last)
	}
}
