package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
)

// dirtyMB reads the kernel's dirty file pages (/proc/meminfo), in MB; -1
// when it cannot. The kernel writes a file's dirty pages back about 30 s
// after the file was first dirtied, all at once, and commits' WAL flushes
// queue behind that write-back (docs/performance.md).
func dirtyMB() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	kb, ok := meminfoKB(string(b), "Dirty")
	if !ok {
		return -1
	}
	return float64(kb) / 1024
}

// meminfoKB finds field's value in /proc/meminfo's text, in kB.
func meminfoKB(meminfo, field string) (int64, bool) {
	for line := range strings.Lines(meminfo) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return v, err == nil
	}
	return 0, false
}

// dirtyNote says how much the kernel had left to write back when a phase
// started and when it ended; empty when either is unknown.
func dirtyNote(start, end float64) string {
	if start < 0 || end < 0 {
		return ""
	}
	return fmt.Sprintf("    the kernel's dirty file pages (write-back due 30 s after a file was first dirtied): %.0f MB at the start, %.0f MB at the end\n", start, end)
}

// printCheckpoints prints the checkpoints started since before (the
// count checkpoints gave then) and returns the count now.
func printCheckpoints(ctx context.Context, dsn string, before int64) int64 {
	now := checkpoints(ctx, dsn)
	fmt.Print(checkpointNote(before, now))
	return now
}

func scratchDatabase(ctx context.Context, admin string) (string, func(), error) {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	name := "quita_bench_" + randHex(6)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("create scratch database (is Postgres up? run make services): %w", err)
	}
	dsn := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	if u := os.Getenv("QUITA_TEST_POSTGRES_URL"); u != "" {
		dsn = replaceDB(u, name)
	}
	return dsn, func() {
		_, _ = db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		db.Close()
	}, nil
}

func replaceDB(u, name string) string {
	// postgres://user@host:port/db?params → same with db replaced.
	i := bytes.IndexByte([]byte(u[len("postgres://"):]), '/')
	if i < 0 {
		return u
	}
	head := u[:len("postgres://")+i+1]
	rest := u[len(head):]
	if q := bytes.IndexByte([]byte(rest), '?'); q >= 0 {
		return head + name + rest[q:]
	}
	return head + name
}

func cleanRedis(ctx context.Context, url, prefix string) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	// The run's context is cancelled by the time this runs; the clean-up
	// must not be. Each create's cached answer would otherwise stay in the
	// machine's Redis for 24 h: ~1.1 KB a charge, a gigabyte after a dozen
	// runs.
	ctx = context.WithoutCancel(ctx)
	keys := make([]string, 0, 1000)
	flush := func() {
		if len(keys) > 0 {
			rdb.Unlink(ctx, keys...)
			keys = keys[:0]
		}
	}
	// redis_rate puts its own "rate:" before the prefix.
	for _, pattern := range []string{prefix + "*", "rate:" + prefix + "*"} {
		iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if keys = append(keys, iter.Val()); len(keys) == cap(keys) {
				flush()
			}
		}
	}
	flush()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func numCPU() int { return runtime.NumCPU() }

// writeHeapProfile writes the allocations sampled since the start (the
// heap profile's alloc_space and alloc_objects) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
