package exactlyonce

import (
	"slices"
	"sync"
	"testing"
)

// Items added while a batch runs wait for it and then go together, in the
// order they were added; no call gets none or more than maxBatch; the
// goroutine ends once the queue is empty and the next item starts one
// again.
func TestQueueGathersWhatArrivesWhileBusy(t *testing.T) {
	t.Parallel()
	var (
		b       queue[int]
		wg      sync.WaitGroup
		mu      sync.Mutex
		batches [][]int
		spawned int
	)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	spawn := func(f func()) {
		mu.Lock()
		spawned++
		mu.Unlock()
		wg.Go(f)
	}
	run := func(batch []int) {
		mu.Lock()
		batches = append(batches, slices.Clone(batch))
		first := len(batches) == 1
		mu.Unlock()
		if first {
			started <- struct{}{}
			<-release // busy: what is added now waits for the next call
		}
	}
	b.add(0, spawn, run)
	<-started
	for i := 1; i <= maxBatch+10; i++ {
		b.add(i, spawn, run)
	}
	close(release)
	wg.Wait()

	if spawned != 1 {
		t.Fatalf("%d goroutines for one busy stretch, want 1", spawned)
	}
	want := [][]int{{0}, seq(1, maxBatch), seq(maxBatch+1, maxBatch+10)}
	if !slices.EqualFunc(batches, want, slices.Equal[[]int]) {
		t.Fatalf("batches %v, want %v", lens(batches), lens(want))
	}

	// Drained: the next item starts a goroutine of its own.
	b.add(-1, spawn, run)
	wg.Wait()
	if spawned != 2 || !slices.Equal(batches[len(batches)-1], []int{-1}) {
		t.Fatalf("after the queue emptied: %d goroutines, last batch %v", spawned, batches[len(batches)-1])
	}
}

// Many goroutines adding at once: every item reaches run exactly once.
func TestQueueLosesNothingUnderContention(t *testing.T) {
	t.Parallel()
	var (
		b   queue[int]
		bg  sync.WaitGroup
		mu  sync.Mutex
		got []int
	)
	run := func(batch []int) {
		if len(batch) == 0 || len(batch) > maxBatch {
			t.Errorf("a batch of %d", len(batch))
		}
		mu.Lock()
		got = append(got, batch...)
		mu.Unlock()
	}
	var adders sync.WaitGroup
	for g := range 8 {
		adders.Go(func() {
			for i := range 500 {
				b.add(g*1000+i, bg.Go, run)
			}
		})
	}
	adders.Wait()
	bg.Wait()
	if len(got) != 8*500 {
		t.Fatalf("%d items reached run, want %d", len(got), 8*500)
	}
	slices.Sort(got)
	if len(slices.Compact(got)) != 8*500 {
		t.Fatal("an item reached run twice")
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func lens(bs [][]int) []int {
	out := make([]int, len(bs))
	for i, b := range bs {
		out[i] = len(b)
	}
	return out
}
