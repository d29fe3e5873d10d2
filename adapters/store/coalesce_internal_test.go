package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// fakeFlushes records what a coalescer ran: each batch's items and each
// single item. A batch holding a "bad" item fails as a transaction would;
// single fails only for that item.
type fakeFlushes struct {
	mu      sync.Mutex
	batches [][]string
	singles []string
	// hold, when set, blocks every flush until it is closed.
	hold    chan struct{}
	started chan struct{}
	// batchErr, when set, is what every batch answers.
	batchErr error
}

func (f *fakeFlushes) batch(ctx context.Context, items []string) error {
	f.wait()
	f.mu.Lock()
	f.batches = append(f.batches, slices.Clone(items))
	f.mu.Unlock()
	if f.batchErr != nil {
		return f.batchErr
	}
	if slices.Contains(items, "bad") {
		return errors.New("duplicate key")
	}
	return nil
}

func (f *fakeFlushes) single(ctx context.Context, item string) error {
	f.wait()
	f.mu.Lock()
	f.singles = append(f.singles, item)
	f.mu.Unlock()
	if item == "bad" {
		return errors.New("duplicate key")
	}
	return nil
}

func (f *fakeFlushes) wait() {
	if f.started != nil {
		select {
		case f.started <- struct{}{}:
		default:
		}
	}
	if f.hold != nil {
		<-f.hold
	}
}

// A call that finds a flight free runs at once and alone: a quiet process
// waits for nobody.
func TestCoalescerLoneCallRunsAlone(t *testing.T) {
	f := &fakeFlushes{}
	c := newCoalescer(1, 64, f.batch, f.single)
	for i := range 3 {
		if err := c.do(t.Context(), fmt.Sprint("item", i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.batches) != 0 || !slices.Equal(f.singles, []string{"item0", "item1", "item2"}) {
		t.Fatalf("batches %v, singles %v; want each call alone, in order", f.batches, f.singles)
	}
}

// startHeld starts one call that holds the coalescer's only flight until
// release is called, then n more calls that queue behind it; it returns
// the queued calls' errors once all have answered.
func startHeld(t *testing.T, f *fakeFlushes, c *coalescer[string], items []string) (release func() map[string]error) {
	t.Helper()
	f.hold, f.started = make(chan struct{}), make(chan struct{}, 1)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs = map[string]error{}
	)
	wg.Go(func() {
		if err := c.do(t.Context(), "first"); err != nil {
			t.Errorf("first: %v", err)
		}
	})
	<-f.started // the first call holds the flight
	for _, it := range items {
		wg.Go(func() {
			err := c.do(t.Context(), it)
			mu.Lock()
			errs[it] = err
			mu.Unlock()
		})
	}
	waitQueued(t, c, len(items))
	return func() map[string]error {
		close(f.hold)
		wg.Wait()
		return errs
	}
}

func waitQueued(t *testing.T, c *coalescer[string], n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		c.mu.Lock()
		queued := len(c.queue)
		c.mu.Unlock()
		if queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Calls that arrive while the flight is busy go out together as one
// batch once it is free.
func TestCoalescerBatchesWhatQueuesBehindAFlight(t *testing.T) {
	f := &fakeFlushes{}
	c := newCoalescer(1, 64, f.batch, f.single)
	items := []string{"a", "b", "c", "d", "e"}
	errs := startHeld(t, f, c, items)()
	for _, it := range items {
		if errs[it] != nil {
			t.Errorf("%s: %v", it, errs[it])
		}
	}
	if len(f.batches) != 1 || len(f.batches[0]) != len(items) {
		t.Fatalf("batches %v; want the 5 queued calls in one", f.batches)
	}
	if !slices.Equal(f.singles, []string{"first"}) {
		t.Errorf("singles %v; want only the first call", f.singles)
	}
}

// maxBatch bounds a batch; the rest goes in the next one.
func TestCoalescerSplitsAtMaxBatch(t *testing.T) {
	f := &fakeFlushes{}
	c := newCoalescer(1, 2, f.batch, f.single)
	errs := startHeld(t, f, c, []string{"a", "b", "c", "d", "e"})()
	for it, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", it, err)
		}
	}
	sizes := []int{}
	for _, b := range f.batches {
		sizes = append(sizes, len(b))
	}
	// Two batches of two, and the fifth call alone.
	if !slices.Equal(sizes, []int{2, 2}) || len(f.singles) != 2 {
		t.Fatalf("batches %v, singles %v; want [2 2] and first + the fifth alone", f.batches, f.singles)
	}
}

// A failed batch is run again call by call: the failing call gets its own
// error and every other call succeeds, as each would have alone.
func TestCoalescerFailedBatchRunsEachAlone(t *testing.T) {
	f := &fakeFlushes{}
	c := newCoalescer(1, 64, f.batch, f.single)
	errs := startHeld(t, f, c, []string{"a", "bad", "c"})()
	if errs["bad"] == nil || errs["a"] != nil || errs["c"] != nil {
		t.Fatalf("errors %v; want only bad's", errs)
	}
	slices.Sort(f.singles)
	if !slices.Equal(f.singles, []string{"a", "bad", "c", "first"}) {
		t.Errorf("singles %v; want each call of the failed batch alone", f.singles)
	}
}

// When the database is unavailable, running each call alone would only
// multiply the load: every call of the batch gets that error.
func TestCoalescerUnavailableIsNotRetriedAlone(t *testing.T) {
	f := &fakeFlushes{batchErr: fmt.Errorf("%w: no connection", ports.ErrStoreUnavailable)}
	c := newCoalescer(1, 64, f.batch, f.single)
	errs := startHeld(t, f, c, []string{"a", "b"})()
	for _, it := range []string{"a", "b"} {
		if !errors.Is(errs[it], ports.ErrStoreUnavailable) {
			t.Errorf("%s: %v, want ErrStoreUnavailable", it, errs[it])
		}
	}
	if !slices.Equal(f.singles, []string{"first"}) {
		t.Errorf("singles %v; want no call run again alone", f.singles)
	}
}

// A call whose context ends while it queues is answered with that error
// and never written.
func TestCoalescerDropsCallsThatGaveUp(t *testing.T) {
	f := &fakeFlushes{hold: make(chan struct{}), started: make(chan struct{}, 1)}
	c := newCoalescer(1, 64, f.batch, f.single)
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.do(t.Context(), "first") })
	<-f.started
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.do(ctx, "gave-up") }()
	waitQueued(t, c, 1)
	cancel()
	close(f.hold)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("gave-up: %v, want context.Canceled", err)
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(f.singles, "gave-up") || len(f.batches) != 0 {
		t.Errorf("singles %v, batches %v: the call that gave up was run", f.singles, f.batches)
	}
}

// Under a steady stream of calls with two flights, every call answers,
// each exactly once, and both flights are free afterwards.
func TestCoalescerUnderConcurrency(t *testing.T) {
	f := &fakeFlushes{}
	c := newCoalescer(2, 16, f.batch, f.single)
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			if err := c.do(context.Background(), fmt.Sprint(i)); err != nil {
				t.Errorf("%d: %v", i, err)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, b := range f.batches {
		if len(b) > 16 {
			t.Errorf("batch of %d, max 16", len(b))
		}
		for _, it := range b {
			seen[it]++
		}
	}
	for _, it := range f.singles {
		seen[it]++
	}
	for i := range 400 {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Errorf("call %d ran %d times", i, n)
		}
	}
	// The last drain frees its flight just after its last answer.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		flights, queued := c.flights, len(c.queue)
		c.mu.Unlock()
		if flights == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("flights %d, queue %d after all answered", flights, queued)
		}
	}
}

// On Postgres, creates that queued behind a busy flight go out as one
// batch. A batch holding two creates of one key fails as a whole (one
// transaction) and is run again create by create: exactly one of the two
// commits, and every other create of the batch commits too.
func TestBatchedCreatesOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	hold, started := make(chan struct{}), make(chan struct{}, 1)
	var mu sync.Mutex
	var batchSizes []int
	db.creates = newCoalescer(1, 64, func(ctx context.Context, cs []chargeCreate) error {
		mu.Lock()
		batchSizes = append(batchSizes, len(cs))
		mu.Unlock()
		return db.insertChargesBound(ctx, cs)
	}, func(ctx context.Context, c chargeCreate) error {
		select {
		case started <- struct{}{}:
			<-hold // the first create keeps the only flight busy
		default:
		}
		return db.insertOneChargeBound(ctx, c)
	})
	scope := ports.Scope{AccountID: "acct_batch", Mode: domain.ModeLive}
	create := func(key string) (string, error) {
		id, err := domain.NewRawID(rand.Reader)
		if err != nil {
			return "", err
		}
		c, err := domain.NewCharge(domain.NewChargeParams{ID: id, AccountID: scope.AccountID, Mode: scope.Mode, Amount: 1990,
			Currency: "BRL", Methods: []domain.Method{domain.MethodPix}, Description: "Pedido", Now: time.Now()})
		if err != nil {
			return "", err
		}
		return id, db.CreateCharge(ctx, c, nil, &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: key},
			Fingerprint: "fp", ResourceID: id, StatusCode: 201, Body: []byte(`{}`), CreatedAt: time.Now()})
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := create("key-first"); err != nil {
			t.Errorf("first: %v", err)
		}
	})
	<-started
	const n = 10
	ids, errs := make([]string, n), make([]error, n)
	for i := range n {
		key := fmt.Sprint("key-", i)
		if i >= n-2 {
			key = "key-shared"
		}
		wg.Go(func() { ids[i], errs[i] = create(key) })
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		db.creates.mu.Lock()
		queued := len(db.creates.queue)
		db.creates.mu.Unlock()
		if queued == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d creates queued, want %d", queued, n)
		}
	}
	close(hold)
	wg.Wait()
	if !slices.Equal(batchSizes, []int{n}) {
		t.Fatalf("batches %v, want the %d queued creates in one", batchSizes, n)
	}
	committed := 0
	for i := range n {
		_, getErr := db.GetCharge(ctx, scope, ids[i])
		switch {
		case errs[i] == nil && getErr == nil:
			committed++
		case i >= n-2 && errors.Is(errs[i], ports.ErrIdempotencyKeyExists) && errors.Is(getErr, ports.ErrNotFound):
		default:
			t.Errorf("create %d: err %v, read back: %v", i, errs[i], getErr)
		}
	}
	if committed != n-1 {
		t.Errorf("%d of the batch committed, want %d", committed, n-1)
	}
}
