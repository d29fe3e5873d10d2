package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/internal/testenv"
)

// The benchmark's clean-up runs after the run's context is cancelled; it
// must still remove the run's keys (each create's cached answer would
// otherwise stay 24 h) and redis_rate's, and nothing outside the prefix.
func TestCleanRedisRemovesTheRunsKeysAfterCancel(t *testing.T) {
	url, base := testenv.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	prefix, keep, rate := base+"run:", base+"other:idem:x", "rate:"+base+"run:rl:k"
	t.Cleanup(func() { rdb.Del(context.Background(), rate) }) // outside testenv's prefix
	pipe := rdb.Pipeline()
	for i := range 2500 { // more than one UNLINK batch
		pipe.Set(ctx, prefix+"idem:"+strconv.Itoa(i), "v", 0)
	}
	pipe.Set(ctx, rate, "v", 0)
	pipe.Set(ctx, keep, "v", 0)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cleanRedis(cancelled, url, prefix)

	for _, pattern := range []string{prefix + "*", "rate:" + prefix + "*"} {
		n := 0
		iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		if err := iter.Err(); err != nil || n != 0 {
			t.Errorf("%d keys left under %s (err %v)", n, pattern, err)
		}
	}
	if n, err := rdb.Exists(ctx, keep).Result(); err != nil || n != 1 {
		t.Errorf("a key outside the run's prefix was removed (exists %d, err %v)", n, err)
	}
}

// A phase names the checkpoints that started during it: the count moves
// with a CHECKPOINT, and the note is empty when none started or the count
// could not be read.
func TestCheckpointsCounted(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	before := checkpoints(ctx, dsn)
	if before < 0 {
		t.Fatal("the checkpoint count could not be read")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	// The statistics reach pg_stat_bgwriter a moment after the
	// checkpoint (the stats collector's flush): read until they do.
	after := checkpoints(ctx, dsn)
	for deadline := time.Now().Add(5 * time.Second); after <= before && time.Now().Before(deadline); after = checkpoints(ctx, dsn) {
		time.Sleep(50 * time.Millisecond)
	}
	if after <= before {
		t.Fatalf("checkpoints %d after a CHECKPOINT, %d before", after, before)
	}
	if got, want := checkpointNote(before, before+2), "    checkpoints started during the phase: 2\n"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	for _, c := range [][2]int64{{5, 5}, {-1, 7}, {4, -1}} {
		if got := checkpointNote(c[0], c[1]); got != "" {
			t.Errorf("note(%d, %d) = %q, want none", c[0], c[1], got)
		}
	}
}

// The after-burst line reads the kernel's dirty pages from /proc/meminfo's
// text; a missing or malformed field gives no figure and no note.
func TestDirtyPagesRead(t *testing.T) {
	const meminfo = "MemTotal:       24573056 kB\nDirty:            136456 kB\nWriteback:           16 kB\n"
	if kb, ok := meminfoKB(meminfo, "Dirty"); !ok || kb != 136456 {
		t.Errorf("Dirty = %d, %v; want 136456, true", kb, ok)
	}
	for _, text := range []string{"MemTotal: 1 kB\n", "Dirty: many kB\n", "DirtyX: 5 kB\n"} {
		if kb, ok := meminfoKB(text, "Dirty"); ok {
			t.Errorf("meminfoKB(%q) = %d, true; want not found", text, kb)
		}
	}
	if got, want := dirtyNote(133.4, 80), "    the kernel's dirty file pages (write-back due 30 s after a file was first dirtied): 133 MB at the start, 80 MB at the end\n"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := dirtyNote(-1, 5); got != "" {
		t.Errorf("note with an unknown start = %q, want none", got)
	}
}

// The reference leaves no tables behind: their dirty pages would be
// written back in a later phase.
func TestReferenceDropsItsTables(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	tps, _, err := reference(ctx, dsn, 2, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if tps <= 0 {
		t.Errorf("reference rate %v, want > 0", tps)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname IN ('ref_charges', 'ref_outbox')").Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d reference tables left behind, want none", left)
	}
}
