package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	errDuplicate   = errors.New("duplicate key")
	errUnavailable = errors.New("no connection")
)

// fakeStore records what a group ran: each batch's items and each single
// item. A batch holding a "bad" item fails as a transaction would; single
// fails only for that item. An item starting with "refused" is refused on
// its own inside a batch (an error of that item alone), the batch written.
type fakeStore struct {
	mu      sync.Mutex
	batches [][]string
	singles []string
	// hold, when set, blocks every flush until it is closed; started
	// gets a value as each flush begins.
	hold    chan struct{}
	started chan struct{}
	// batchErr, when set, is what every batch answers.
	batchErr error
}

func (f *fakeStore) batch(_ context.Context, items []string, results []Result[string]) error {
	f.wait()
	f.mu.Lock()
	f.batches = append(f.batches, slices.Clone(items))
	f.mu.Unlock()
	if f.batchErr != nil {
		return f.batchErr
	}
	if slices.Contains(items, "bad") {
		return errDuplicate
	}
	for i, it := range items {
		if strings.HasPrefix(it, "refused") {
			results[i].Err = fmt.Errorf("%s: not refundable", it)
			continue
		}
		results[i].Value = "batched " + it
	}
	return nil
}

func (f *fakeStore) single(_ context.Context, item string) (string, error) {
	f.wait()
	f.mu.Lock()
	f.singles = append(f.singles, item)
	f.mu.Unlock()
	if item == "bad" {
		return "", errDuplicate
	}
	return "alone " + item, nil
}

func (f *fakeStore) wait() {
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

func (f *fakeStore) group(maxFlights, maxBatch int) *Group[string, string] {
	return New(Config[string, string]{Batch: f.batch, Single: f.single, MaxFlights: maxFlights, MaxBatch: maxBatch,
		Timeout: 5 * time.Second, Final: func(err error) bool { return errors.Is(err, errUnavailable) }})
}

type outcome struct {
	value string
	err   error
}

// startHeld starts one call that holds the group's only flight until
// release is called, then the calls of items, which queue behind it; it
// returns their outcomes once all have answered.
func startHeld(t *testing.T, f *fakeStore, g *Group[string, string], items []string) (release func() map[string]outcome) {
	t.Helper()
	f.hold, f.started = make(chan struct{}), make(chan struct{}, 1)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out = map[string]outcome{}
	)
	wg.Go(func() {
		if _, err := g.Do(t.Context(), "first"); err != nil {
			t.Errorf("first: %v", err)
		}
	})
	<-f.started // the first call holds the flight
	for _, it := range items {
		wg.Go(func() {
			v, err := g.Do(t.Context(), it)
			mu.Lock()
			out[it] = outcome{v, err}
			mu.Unlock()
		})
	}
	waitQueued(t, g, len(items))
	return func() map[string]outcome {
		close(f.hold)
		wg.Wait()
		return out
	}
}

func waitQueued[T, R any](t *testing.T, g *Group[T, R], n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		queued := g.Queued()
		if queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", queued, n)
		}
	}
}

// waitIdle fails unless g's flights are all free and its queue empty soon.
func waitIdle[T, R any](t *testing.T, g *Group[T, R]) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		flights, queued := g.flights, len(g.queue)
		g.mu.Unlock()
		if flights == 0 && queued == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("flights %d, queue %d after all answered", flights, queued)
		}
	}
}

// A call that finds a flight free runs at once and alone: a quiet process
// waits for nobody.
func TestLoneCallRunsAlone(t *testing.T) {
	f := &fakeStore{}
	g := f.group(1, 64)
	for i := range 3 {
		v, err := g.Do(t.Context(), fmt.Sprint("item", i))
		if err != nil || v != fmt.Sprint("alone item", i) {
			t.Fatalf("item%d: %q, %v", i, v, err)
		}
	}
	if len(f.batches) != 0 || !slices.Equal(f.singles, []string{"item0", "item1", "item2"}) {
		t.Fatalf("batches %v, singles %v; want each call alone, in order", f.batches, f.singles)
	}
}

// Calls that arrive while the flight is busy go out together as one batch
// once it is free, and each gets the result the batch gave it.
func TestBatchesWhatQueuesBehindAFlight(t *testing.T) {
	f := &fakeStore{}
	g := f.group(1, 64)
	items := []string{"a", "b", "c", "d", "e"}
	out := startHeld(t, f, g, items)()
	for _, it := range items {
		if o := out[it]; o.err != nil || o.value != "batched "+it {
			t.Errorf("%s: %+v, want its own batched result", it, o)
		}
	}
	if len(f.batches) != 1 || len(f.batches[0]) != len(items) {
		t.Fatalf("batches %v; want the 5 queued calls in one", f.batches)
	}
	if !slices.Equal(f.singles, []string{"first"}) {
		t.Errorf("singles %v; want only the first call", f.singles)
	}
}

// An error the batch reports for one item is that item's alone: the batch
// committed, nothing is run again, and the other items get their results.
// The stats count every flush, alone or batched, the calls it carried and
// the time it took.
func TestStats(t *testing.T) {
	f := &fakeStore{}
	g := f.group(1, 64)
	if _, err := g.Do(t.Context(), "alone"); err != nil {
		t.Fatal(err)
	}
	release := startHeld(t, f, g, []string{"a", "b", "c"})
	time.Sleep(20 * time.Millisecond) // the held flight is busy this long at least
	for it, o := range release() {
		if o.err != nil {
			t.Errorf("%s: %v", it, o.err)
		}
	}
	// alone, first (held), then a+b+c as one batch.
	if s := g.Stats(); s.Flushes != 3 || s.Items != 5 || s.Busy < 20*time.Millisecond {
		t.Fatalf("stats %+v, want 3 flushes of 5 calls, busy at least 20ms", s)
	}
}

// MaxBatch bounds a batch; the rest goes in the next one.
func TestSplitsAtMaxBatch(t *testing.T) {
	f := &fakeStore{}
	g := f.group(1, 2)
	for it, o := range startHeld(t, f, g, []string{"a", "b", "c", "d", "e"})() {
		if o.err != nil {
			t.Errorf("%s: %v", it, o.err)
		}
	}
	var sizes []int
	for _, b := range f.batches {
		sizes = append(sizes, len(b))
	}
	// Two batches of two, and the fifth call alone.
	if !slices.Equal(sizes, []int{2, 2}) || len(f.singles) != 2 {
		t.Fatalf("batches %v, singles %v; want [2 2] and first + the fifth alone", f.batches, f.singles)
	}
}

// Calls of one key never share a batch: the second waits for the next.
func TestKeyKeepsOneKeyPerBatch(t *testing.T) {
	f := &fakeStore{}
	g := New(Config[string, string]{Batch: f.batch, Single: f.single, MaxBatch: 64,
		Key: func(s string) string { return strings.TrimSuffix(s, "'") }})
	for it, o := range startHeld(t, f, g, []string{"a", "a'", "b", "b'", "c"})() {
		if o.err != nil {
			t.Errorf("%s: %v", it, o.err)
		}
	}
	for _, b := range f.batches {
		seen := map[string]bool{}
		for _, it := range b {
			k := strings.TrimSuffix(it, "'")
			if seen[k] {
				t.Errorf("batch %v holds key %s twice", b, k)
			}
			seen[k] = true
		}
	}
	if len(f.batches) == 0 || len(f.batches[0]) != 3 {
		t.Errorf("batches %v; want a, b and c in the first", f.batches)
	}
}

// A batch that fails as a whole is run again call by call: the failing
// call gets its own error and every other call succeeds, as each would
// have alone.
// A single item that fails alone gets its error; the group goes on.
// When Final says the failure holds for every call, running each alone
// would only multiply the load: every call of the batch gets that error.
// A call whose context ends while it queues is answered with that error
// and never run.
// A batch that panics answers every call of it with an error, never a
// success, and the group goes on serving.
// Under a steady stream of calls with two flights, every call answers,
// each exactly once, no batch exceeds MaxBatch, and once idle the group
// holds no flight and runs no goroutine.
func TestUnderConcurrency(t *testing.T) {
	before := runtime.NumGoroutine()
	f := &fakeStore{}
	g := f.group(2, 16)
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			it := fmt.Sprint(i)
			if i%50 == 0 {
				it = "bad"
			}
			v, err := g.Do(context.Background(), it)
			switch {
			case it == "bad" && !errors.Is(err, errDuplicate):
				t.Errorf("bad: %v, want its duplicate key", err)
			case it != "bad" && (err != nil || !strings.HasSuffix(v, " "+it)):
				t.Errorf("%s: %q, %v", it, v, err)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, b := range f.batches {
		if len(b) > 16 {
			t.Errorf("batch of %d, max 16", len(b))
		}
		if !slices.Contains(b, "bad") {
			for _, it := range b {
				seen[it]++
			}
		}
	}
	for _, it := range f.singles {
		seen[it]++
	}
	for i := range 400 {
		if n := seen[fmt.Sprint(i)]; i%50 != 0 && n != 1 {
			t.Errorf("call %d written %d times", i, n)
		}
	}
	waitIdle(t, g)
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines once idle, %d before", runtime.NumGoroutine(), before)
		}
	}
}
