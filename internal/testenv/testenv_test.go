package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The database must exist while the test runs and be gone once its cleanups
// have run, even with a connection still open on it.
func TestPostgresDSNDropsDatabaseAfterTest(t *testing.T) {
	t.Parallel()

	var name string
	var leaked *sql.DB // deliberately left open to exercise WITH (FORCE)
	ok := t.Run("test owning the database", func(t *testing.T) {
		dsn := PostgresDSN(t)
		name = dbName(t, dsn)
		if !strings.HasPrefix(name, dbNamePrefix) {
			t.Errorf("database name %q lacks prefix %q", name, dbNamePrefix)
		}
		if got := countDatabases(t, name); got != 1 {
			t.Fatalf("pg_database rows for %s while the test runs = %d, want 1", name, got)
		}

		db, err := sql.Open("pg", dsn)
		if err != nil {
			t.Fatal(err)
		}
		leaked = db
		var current string
		if err := db.QueryRowContext(t.Context(), "SELECT current_database()").Scan(&current); err != nil {
			t.Fatal(err)
		}
		if current != name {
			t.Errorf("connected to %q, want %q", current, name)
		}
		if _, err := db.ExecContext(t.Context(), "CREATE TABLE probe (id int)"); err != nil {
			t.Fatal(err)
		}
	})
	if leaked != nil {
		defer leaked.Close()
	}
	if !ok {
		return
	}
	if name == "" {
		t.Skip("PostgreSQL unavailable; the subtest says why")
	}

	if got := countDatabases(t, name); got != 0 {
		t.Errorf("pg_database rows for %s after the test = %d, want 0", name, got)
	}
}

// Two calls, even in one test, must not share anything.
func TestPostgresDSNIsUniquePerCall(t *testing.T) {
	t.Parallel()

	a, b := PostgresDSN(t), PostgresDSN(t)
	if a == b {
		t.Fatalf("two calls returned the same DSN %s", a)
	}

	dbA := openPG(t, a)
	if _, err := dbA.ExecContext(t.Context(), "CREATE TABLE only_in_a (id int)"); err != nil {
		t.Fatal(err)
	}
	dbB := openPG(t, b)
	var n int
	err := dbB.QueryRowContext(t.Context(),
		"SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("table created in one database is visible in the other")
	}
}

// Keys under the prefix go away after the test, however many there are;
// keys outside it stay.
func TestRedisURLDeletesKeysUnderPrefix(t *testing.T) {
	t.Parallel()

	const keys = 2500 // more than one SCAN page
	var redisURL, prefix string
	ok := t.Run("test owning the prefix", func(t *testing.T) {
		redisURL, prefix = RedisURL(t)
		if !strings.HasPrefix(prefix, "t:") || !strings.HasSuffix(prefix, ":") {
			t.Errorf("prefix %q, want t:<hex>:", prefix)
		}
		client := redisClient(t, redisURL)
		pipe := client.Pipeline()
		for i := range keys {
			pipe.Set(t.Context(), fmt.Sprintf("%s%d", prefix, i), "v", 0)
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := countKeys(t, client, prefix); got != keys {
			t.Fatalf("keys under %s while the test runs = %d, want %d", prefix, got, keys)
		}
	})
	if !ok {
		return
	}
	if prefix == "" {
		t.Skip("Redis unavailable; the subtest says why")
	}

	client := redisClient(t, redisURL)
	// A key sharing the prefix's leading characters but not the prefix must
	// survive the sweep.
	outside := strings.TrimSuffix(prefix, ":") + "x"
	if err := client.Set(t.Context(), outside, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Del(context.Background(), outside) })

	t.Run("second test", func(t *testing.T) {
		if _, p := RedisURL(t); p == prefix {
			t.Errorf("prefix %q handed out twice", p)
		}
	})

	if got := countKeys(t, client, prefix); got != 0 {
		t.Errorf("keys under %s after the test = %d, want 0", prefix, got)
	}
	if n, err := client.Exists(t.Context(), outside).Result(); err != nil || n != 1 {
		t.Errorf("key %s outside the prefix: exists=%d err=%v, want it kept", outside, n, err)
	}
}

func TestSQLiteDSNIsInTempDir(t *testing.T) {
	t.Parallel()

	a, b := SQLiteDSN(t), SQLiteDSN(t)
	for _, dsn := range []string{a, b} {
		path, ok := strings.CutPrefix(dsn, "sqlite:")
		if !ok || !filepath.IsAbs(path) {
			t.Errorf("SQLiteDSN = %q, want sqlite:<absolute path>", dsn)
		}
	}
	if a == b {
		t.Errorf("two calls returned the same DSN %s", a)
	}
}

// An unreachable server fails the test under CI and skips it elsewhere.
// Not parallel: it sets environment variables.
func TestUnreachableServerPolicy(t *testing.T) {
	t.Setenv("QUITA_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable")
	t.Setenv("QUITA_TEST_REDIS_URL", "redis://127.0.0.1:1/0")

	helpers := map[string]func(testing.TB){
		"PostgresDSN": func(tb testing.TB) { PostgresDSN(tb) },
		"RedisURL":    func(tb testing.TB) { RedisURL(tb) },
	}
	for _, ci := range []string{"true", "1", "", "false"} {
		for name, helper := range helpers {
			t.Run(name+"/CI="+ci, func(t *testing.T) {
				t.Setenv("CI", ci)
				rec := run(t, helper)

				wantFail := ci == "true" || ci == "1"
				switch {
				case wantFail && rec.fatal == "":
					t.Errorf("under CI: no failure (skip=%q)", rec.skip)
				case !wantFail && rec.skip == "":
					t.Errorf("outside CI: no skip (fatal=%q)", rec.fatal)
				case !wantFail && !strings.Contains(rec.skip, "make services"):
					t.Errorf("skip message %q does not say to run make services", rec.skip)
				}
			})
		}
	}
}

// recorder stands in for a testing.TB and records how the helper gave up.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(t *testing.T, helper func(testing.TB)) *recorder {
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(rec)
	}()
	<-done
	return rec
}

func dbName(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

func openPG(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pg", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func countDatabases(t *testing.T, name string) int {
	t.Helper()
	admin := openPG(t, postgresServerURL())
	var n int
	err := admin.QueryRowContext(context.Background(),
		"SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func redisClient(t *testing.T, redisURL string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	return client
}

func countKeys(t *testing.T, client *redis.Client, prefix string) int {
	t.Helper()
	var n int
	iter := client.Scan(context.Background(), 0, prefix+"*", 1000).Iterator()
	for iter.Next(context.Background()) {
		n++
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
