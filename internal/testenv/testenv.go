// Package testenv gives integration tests their own slice of the shared
// PostgreSQL and Redis servers, and a throw-away SQLite file.
//
// # Isolation
//
// Every call hands out something no other test can see: PostgresDSN creates a
// new database with a random name, RedisURL hands out a random key prefix,
// and SQLiteDSN points into the test's own t.TempDir. Tests may therefore
// call t.Parallel freely, packages may run concurrently under `go test ./...`,
// and two developers (or CI and a developer) may share one server. Cleanup is
// registered with t.Cleanup, so the database is dropped and the keys deleted
// when the test ends, pass or fail: nothing is left behind.
//
// Because cleanups run last-registered-first, a caller that opens a pool on
// the returned DSN and registers its Close afterwards gets the pool closed
// before the database is dropped. The drop uses WITH (FORCE) anyway, so a
// forgotten connection cannot keep the database alive.
//
// # When a server is missing
//
// A developer without PostgreSQL or Redis running gets a skip that says to
// run `make services`. Under CI (env CI set to a true value such as "true" or
// "1") the same situation is a test failure: a green CI run must mean the
// integration tests ran, never that they were silently skipped.
//
// # Configuration
//
//   - QUITA_TEST_POSTGRES_URL: an administrative connection to the server on
//     which databases are created; default
//     postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable. The role
//     needs CREATEDB.
//   - QUITA_TEST_REDIS_URL: default redis://127.0.0.1:6379/0.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun/driver/pgdriver"
)

const (
	defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	defaultRedisURL    = "redis://127.0.0.1:6379/0"

	// dbNamePrefix marks databases made by this package, so a leftover from
	// a killed test process is easy to recognise and drop by hand.
	dbNamePrefix = "quita_t_"

	// reachTimeout bounds the first contact with a server. It is short on
	// purpose: a missing server should cost a test seconds, not minutes.
	reachTimeout = 5 * time.Second

	// opTimeout bounds CREATE/DROP DATABASE and the Redis key sweep.
	opTimeout = 60 * time.Second
)

// PostgresDSN creates an empty database with a unique name (quita_t_<hex>)
// on the server named by QUITA_TEST_POSTGRES_URL and returns a DSN for it,
// with the same user, host and query parameters as the server URL. The
// database is dropped WITH (FORCE) when t ends.
//
// If the server cannot be reached, PostgresDSN skips t, or fails it when
// running under CI.
func PostgresDSN(t testing.TB) string {
	t.Helper()

	serverURL := postgresServerURL()
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("testenv: QUITA_TEST_POSTGRES_URL %q is not a postgres:// URL", redact(serverURL))
	}

	admin := adminDB(serverURL)
	defer admin.Close()

	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout)
	err = admin.PingContext(ctx)
	cancel()
	if err != nil {
		unavailable(t, "PostgreSQL", serverURL, err)
		return ""
	}

	name := dbNamePrefix + randomHex(8)
	if err := createDatabase(admin, name); err != nil {
		t.Fatalf("testenv: create database %s on %s: %v", name, redact(serverURL), err)
	}

	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run, hence Background.
		if err := dropDatabase(serverURL, name); err != nil {
			t.Errorf("testenv: drop database %s on %s: %v (drop it by hand)", name, redact(serverURL), err)
		}
	})

	dsn := *u
	dsn.Path = "/" + name
	dsn.RawPath = ""
	return dsn.String()
}

func createDatabase(admin *sql.DB, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()

	stmt := "CREATE DATABASE " + quoteIdent(name)
	for {
		_, err := admin.ExecContext(ctx, stmt)
		// 55006 object_in_use: another session is connected to template1
		// (someone's psql, or a concurrent CREATE DATABASE on an old server).
		// It clears by itself, so wait for it rather than fail the test.
		var pgErr pgdriver.Error
		if err == nil || !errors.As(err, &pgErr) || pgErr.Field('C') != "55006" {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// adminDB is a connection to the server for CREATE and DROP DATABASE,
// whose reads wait up to opTimeout: on a loaded machine either (a
// checkpoint, the files' removal) outlasts the driver's default 10 s read
// timeout, so the connection waits as long as the statement's context.
func adminDB(serverURL string) *sql.DB {
	return sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(serverURL),
		pgdriver.WithReadTimeout(opTimeout), pgdriver.WithWriteTimeout(opTimeout)))
}

// dropDatabase drops name, waiting up to opTimeout.
func dropDatabase(serverURL, name string) error {
	admin := adminDB(serverURL)
	defer admin.Close()

	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)+" WITH (FORCE)")
	return err
}

// RedisURL checks that the Redis server named by QUITA_TEST_REDIS_URL
// answers PING and returns its URL with a key prefix of the form "t:<hex>:"
// that no other test uses. The test must put every key it writes under that
// prefix; when t ends, all keys under it are deleted (SCAN + DEL), and keys
// outside it are never touched.
//
// If the server cannot be reached, RedisURL skips t, or fails it when
// running under CI.
func RedisURL(t testing.TB) (redisURL string, prefix string) {
	t.Helper()

	redisURL = redisServerURL()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatalf("testenv: QUITA_TEST_REDIS_URL %q: %v", redact(redisURL), err)
	}

	// One dial, no command retries: a missing server should be reported at
	// once, not after the client's usual backoff.
	pingOpts := *opts
	pingOpts.DialerRetries = 1
	pingOpts.MaxRetries = -1
	client := redis.NewClient(&pingOpts)
	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout)
	err = client.Ping(ctx).Err()
	cancel()
	client.Close()
	if err != nil {
		unavailable(t, "Redis", redisURL, err)
		return "", ""
	}

	prefix = "t:" + randomHex(8) + ":"
	t.Cleanup(func() {
		if err := deleteKeys(opts, prefix); err != nil {
			t.Errorf("testenv: delete Redis keys %s* on %s: %v", prefix, redact(redisURL), err)
		}
	})
	return redisURL, prefix
}

// deleteKeys removes every key starting with prefix. prefix holds only
// characters that are literal in a MATCH pattern.
func deleteKeys(opts *redis.Options, prefix string) error {
	client := redis.NewClient(opts)
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()

	var cursor uint64
	for {
		keys, next, err := client.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := client.Del(ctx, keys...).Err(); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// SQLiteDSN returns "sqlite:<path>" for a database file inside t.TempDir,
// which the testing package removes when t ends. The file does not exist
// yet; the store creates it on first open.
func SQLiteDSN(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
}

// unavailable applies the policy for a server that does not answer: fail
// under CI, skip elsewhere. It uses only Fatalf and Skipf, both of which end
// the calling goroutine.
func unavailable(t testing.TB, service, serverURL string, err error) {
	t.Helper()
	if inCI() {
		t.Fatalf("testenv: %s at %s is unreachable and CI is set, so this test fails instead of skipping: %v",
			service, redact(serverURL), err)
	}
	t.Skipf("testenv: %s at %s is unreachable (%v); run `make services` to start it", service, redact(serverURL), err)
}

func inCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

func postgresServerURL() string {
	if v := os.Getenv("QUITA_TEST_POSTGRES_URL"); v != "" {
		return v
	}
	return defaultPostgresURL
}

func redisServerURL() string {
	if v := os.Getenv("QUITA_TEST_REDIS_URL"); v != "" {
		return v
	}
	return defaultRedisURL
}

// redact hides a password so a server URL can appear in test output.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparseable URL>"
	}
	return u.Redacted()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}

func quoteIdent(s string) string {
	return `"` + s + `"`
}

// HangingServer listens on a loopback port, accepts every connection and
// never answers on it: a server that is up and stuck, which is worse for
// a client than one that refuses. It returns the address and how many
// connections it has accepted so far; everything closes with the test.
func HangingServer(t testing.TB) (addr string, accepted func() int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	return ln.Addr().String(), n.Load
}

// Binary is the path of the program name (e.g. redis-server, for a test
// that runs its own servers), from PATH; a missing one fails the test
// under CI and skips it elsewhere.
func Binary(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		unavailable(t, name, "PATH", err)
	}
	return path
}
