package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

// waitQueued waits until n calls queue in g.
func waitQueued(t *testing.T, g interface{ Queued() int }, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); g.Queued() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", g.Queued(), n)
		}
	}
}

// On Postgres, creates that queued behind a busy flight go out as one
// batch of multi-row statements: every charge, event, record and counter
// reads back as if written alone. A batch holding two creates of one key
// fails as a whole (one transaction) and is run again create by create:
// exactly one of the two commits, and every other create of it too.
func TestBatchedCreatesOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	var (
		mu         sync.Mutex
		batchSizes []int
		hold       chan struct{}
		started    chan struct{}
	)
	pg := db.charges.(*pgCharges)
	pg.creates = newGroup(func(ctx context.Context, cs []pgCreate, results []groupcommit.Result[struct{}]) error {
		mu.Lock()
		batchSizes = append(batchSizes, len(cs))
		mu.Unlock()
		return pg.insertCharges(ctx, cs, results)
	}, func(ctx context.Context, c pgCreate) (struct{}, error) {
		select {
		case started <- struct{}{}:
			<-hold // the round's first create keeps the only flight busy
		default:
		}
		return pg.insertOneCharge(ctx, c)
	})
	scope := ports.Scope{AccountID: "acct_batch", Mode: domain.ModeLive}
	type created struct {
		c   *domain.Charge
		evs []domain.Event
		key string
		err error
	}
	create := func(key string, amount int64) *created {
		now := time.Now()
		c, evs, err := newPixCharge(scope, amount, "Pedido "+key, now)
		if err != nil {
			t.Error(err) // in a goroutine: no Fatal
			return &created{key: key, err: err}
		}
		r := &created{c: c, evs: evs, key: key}
		r.err = db.CreateCharge(ctx, c, evs, &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: key},
			Fingerprint: "fp-" + key, ResourceID: c.ID(), StatusCode: 201, Body: []byte(`{"key":"` + key + `"}`), CreatedAt: now,
			SettlesIntent: !strings.HasPrefix(key, "cached-")})
		return r
	}
	// round runs a first create that holds the flight, queues one create
	// per key behind it, lets them go and returns the queued ones.
	round := func(keys []string) []*created {
		hold, started = make(chan struct{}), make(chan struct{}, 1)
		mu.Lock()
		batchSizes = nil
		mu.Unlock()
		var wg sync.WaitGroup
		wg.Go(func() {
			if r := create("first-"+keys[0], 100); r.err != nil {
				t.Errorf("first: %v", r.err)
			}
		})
		<-started
		out := make([]*created, len(keys))
		for i, k := range keys {
			wg.Go(func() { out[i] = create(k, int64(1000+i)) })
		}
		waitQueued(t, pg.creates, len(keys))
		close(hold)
		wg.Wait()
		if !slices.Equal(batchSizes, []int{len(keys)}) {
			t.Fatalf("batches %v, want the %d queued creates in one", batchSizes, len(keys))
		}
		return out
	}
	var wantN, wantVolume int64
	check := func(r *created) {
		t.Helper()
		got, err := db.GetCharge(ctx, scope, r.c.ID())
		if err != nil {
			t.Errorf("%s: read back: %v", r.key, err)
			return
		}
		if g, w := got.Snapshot(), r.c.Snapshot(); g.Amount != w.Amount || g.Description != w.Description || g.Status != w.Status {
			t.Errorf("%s: read back amount %d %q %s, want %d %q %s", r.key, g.Amount, g.Description, g.Status, w.Amount, w.Description, w.Status)
		}
		evs, err := db.ListChargeEvents(ctx, scope, r.c.ID())
		if err != nil || len(evs) != len(r.evs) {
			t.Errorf("%s: %d events (%v), want %d", r.key, len(evs), err, len(r.evs))
		}
		for i := range evs {
			if i < len(r.evs) && (evs[i].ID != r.evs[i].ID || !bytes.Equal(evs[i].Payload, r.evs[i].Payload)) {
				t.Errorf("%s: event %d is %s, want %s with its payload", r.key, i, evs[i].ID, r.evs[i].ID)
			}
		}
		rec, err := db.GetIdempotencyRecord(ctx, ports.IdempotencyKey{Scope: scope, Key: r.key})
		if err != nil || rec.ResourceID != r.c.ID() || string(rec.Body) != `{"key":"`+r.key+`"}` {
			t.Errorf("%s: record %+v, %v", r.key, rec, err)
		}
		wantN, wantVolume = wantN+1, wantVolume+r.c.Amount()
	}

	// A batch that commits: 37 creates = statements of 32, 4 and 1 rows,
	// each with its cob intent recorded first, which the batch settles —
	// but for the one whose record says its intent is not the store's
	// (it went to the cache): that create sends no DELETE.
	keys := make([]string, 37)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
	}
	keys[5] = "cached-5"
	for _, k := range append(slices.Clone(keys), "bystander") {
		in := ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: scope, Key: k}, TxID: "tx-" + k, CreatedAt: time.Now()}
		if err := db.RecordProviderIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range round(keys) {
		if r.err != nil {
			t.Errorf("%s: %v", r.key, r.err)
			continue
		}
		check(r)
	}
	left, err := db.ProviderIntentsBefore(ctx, time.Now().Add(time.Hour), 100)
	var leftKeys []string
	for _, in := range left {
		leftKeys = append(leftKeys, in.Key.Key)
	}
	slices.Sort(leftKeys)
	if err != nil || !slices.Equal(leftKeys, []string{"bystander", "cached-5"}) {
		t.Errorf("intents left after the batch: %v (%v), want the bystander's and the unsettled create's", leftKeys, err)
	}
	wantN, wantVolume = wantN+1, wantVolume+100 // the round's first create

	// A batch that fails on a key used twice, run again alone.
	keys = []string{"dup-0", "dup-1", "dup-2", "dup-shared", "dup-shared"}
	losers := 0
	for _, r := range round(keys) {
		if r.key == "dup-shared" && errors.Is(r.err, ports.ErrIdempotencyKeyExists) {
			losers++
			if _, err := db.GetCharge(ctx, scope, r.c.ID()); !errors.Is(err, ports.ErrNotFound) {
				t.Errorf("the losing create's charge was written (err %v)", err)
			}
			continue
		}
		if r.err != nil {
			t.Errorf("%s: %v", r.key, r.err)
			continue
		}
		check(r)
	}
	if losers != 1 {
		t.Errorf("%d creates of the shared key lost, want 1", losers)
	}
	wantN, wantVolume = wantN+1, wantVolume+100

	// The counters stay exact, whether the deltas are pending or folded.
	checkStats := func(when string) {
		t.Helper()
		got, err := db.countCharges(ctx, scope, "")
		if err != nil || got != wantN {
			t.Errorf("%s: %d charges counted (%v), want %d", when, got, err, wantN)
		}
		aggs, err := db.aggregateDayTotals(ctx, scope, time.Now().UTC().Truncate(24*time.Hour), "")
		var count, volume int64
		for _, a := range aggs {
			count, volume = count+a.Count, volume+a.Volume
		}
		if err != nil || count != wantN || volume != wantVolume {
			t.Errorf("%s: day totals %d charges, volume %d (%v); want %d, %d", when, count, volume, err, wantN, wantVolume)
		}
	}
	checkStats("before the fold")
	if _, err := db.FoldChargeStats(ctx); err != nil {
		t.Fatal(err)
	}
	checkStats("after the fold")
}

// Creates right after every connection of the database was terminated —
// before the backends' farewells may have reached the pool's sockets —
// all succeed: a connection found dead under the batch is replaced once.
func TestCreatesSurviveTerminatedConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	scope := ports.Scope{AccountID: "acct_term", Mode: domain.ModeTest}
	var n atomic.Int64
	create := func() error {
		key := fmt.Sprint("term-", n.Add(1))
		c, _, err := newPixCharge(scope, 1990, "Pedido", time.Now())
		if err != nil {
			return err
		}
		return db.CreateCharge(ctx, c, nil, &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: key},
			Fingerprint: "fp", ResourceID: c.ID(), StatusCode: 201, Body: []byte(`{}`), CreatedAt: time.Now()})
	}
	for i := range 20 {
		// Use a few pgfast connections as creates do, then terminate them all.
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if err := create(); err != nil {
					t.Errorf("warm create: %v", err)
				}
			})
		}
		wg.Wait()
		if _, err := db.bun.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		if err := create(); err != nil {
			t.Fatalf("create %d right after the terminations: %v", i, err)
		}
	}
}
