//go:build chaos

package chaos

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	_ "github.com/uptrace/bun/driver/pgdriver" // registers "pg"
)

// The chaos run uses the same servers as `make test` (scripts/services.sh)
// and shares them with other tests and developers, so every fault stays on
// its own database and its own Redis database index: it never restarts the
// PostgreSQL server and never runs FLUSHALL.
const (
	defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	defaultRedisURL    = "redis://127.0.0.1:6379/0"
	// ownerKey marks a Redis database index as taken by one chaos run.
	ownerKey = "quita-chaos:owner"
	// firstRedisDB..lastRedisDB are the indexes a run may claim; 0, which
	// internal/testenv uses with key prefixes, is never one of them.
	firstRedisDB, lastRedisDB = 8, 15
)

// database is the run's own PostgreSQL database.
type database struct {
	name     string
	dsn      string  // for quitad and the checks
	adminURL string  // the server's maintenance database
	admin    *sql.DB // for faults: never connected to the run's database
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// newDatabase creates quita_chaos_<hex> and drops it when t ends. A server
// that does not answer fails the test: `make chaos` starts the services
// first, so a missing one is a broken setup, never a reason to skip.
func newDatabase(t *testing.T) *database {
	t.Helper()
	adminURL := envOr("QUITA_TEST_POSTGRES_URL", defaultPostgresURL)
	admin, err := sql.Open("pg", adminURL)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		t.Fatalf("postgres at %s does not answer (run `make services`): %v", redact(adminURL), err)
	}
	name := "quita_chaos_" + randomHex(6)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if os.Getenv("CHAOS_KEEP") != "" {
			t.Logf("CHAOS_KEEP set: database %s kept", name)
			admin.Close()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// The run may have ended inside a database outage.
		_, _ = admin.ExecContext(ctx, "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS true")
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v (drop it by hand)", name, err)
		}
		admin.Close()
	})
	u, _ := url.Parse(adminURL)
	u.Path = "/" + name
	return &database{name: name, dsn: u.String(), adminURL: adminURL, admin: admin}
}

// terminateBackends ends every connection to the run's database, as a
// server restart or a failover does to the application's pool.
func (d *database) terminateBackends(ctx context.Context) (int, error) {
	var n int
	err := d.admin.QueryRowContext(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
		d.name).Scan(&n)
	return n, err
}

// outage makes the database refuse new connections for d and ends the
// existing ones, which is what the application sees while a server
// restarts: the closest to a restart that leaves the shared server alone.
func (d *database) outage(ctx context.Context, length time.Duration) error {
	if _, err := d.admin.ExecContext(ctx, "ALTER DATABASE "+d.name+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	end := time.Now().Add(length)
	var err error
	for time.Now().Before(end) {
		if _, err = d.terminateBackends(ctx); err != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, aerr := d.admin.ExecContext(context.WithoutCancel(ctx), "ALTER DATABASE "+d.name+" WITH ALLOW_CONNECTIONS true")
	if err != nil {
		return err
	}
	return aerr
}

// open connects to the run's database for the checks.
func (d *database) open(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pg", d.dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	return db
}

// redisDB is the Redis database index the run owns.
type redisDB struct {
	url    string
	client *redis.Client
	owner  string
}

// claimRedis takes an empty database index in [firstRedisDB, lastRedisDB]
// by writing ownerKey with SET NX, so two chaos runs at once never share
// one, and empties it when t ends.
func claimRedis(t *testing.T) *redisDB {
	t.Helper()
	base := envOr("QUITA_TEST_REDIS_URL", defaultRedisURL)
	opts, err := redis.ParseURL(base)
	if err != nil {
		t.Fatalf("QUITA_TEST_REDIS_URL: %v", err)
	}
	owner := "run-" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for db := lastRedisDB; db >= firstRedisDB; db-- {
		o := *opts
		o.DB = db
		c := redis.NewClient(&o)
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			c.Close()
			t.Fatalf("redis at %s does not answer (run `make services`): %v", redact(base), err)
		}
		if n == 0 {
			if ok, err := c.SetNX(ctx, ownerKey, owner, 30*time.Minute).Result(); err == nil && ok {
				u, _ := url.Parse(base)
				u.Path = fmt.Sprintf("/%d", db)
				r := &redisDB{url: u.String(), client: c, owner: owner}
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if v, _ := c.Get(ctx, ownerKey).Result(); v == owner {
						c.FlushDB(ctx)
					}
					c.Close()
				})
				return r
			}
		}
		c.Close()
	}
	t.Fatalf("redis: no empty database index in %d..%d to claim", firstRedisDB, lastRedisDB)
	return nil
}

// flush loses everything quitad keeps in Redis (idempotency claims and
// cached answers, rate-limit buckets, login attempts) at once, keeping
// only the run's claim on the index.
func (r *redisDB) flush(ctx context.Context) error {
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.FlushDB(ctx)
		p.Set(ctx, ownerKey, r.owner, 30*time.Minute)
		return nil
	})
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparseable URL>"
	}
	return u.Redacted()
}
