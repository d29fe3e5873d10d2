package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestAnItemsOwnErrorIsNotRetried(t *testing.T) {
	f := &fakeStore{}
	g := f.group(1, 64)
	out := startHeld(t, f, g, []string{"a", "refused-b", "c"})()
	if out["refused-b"].err == nil || out["a"].value != "batched a" || out["c"].value != "batched c" {
		t.Fatalf("outcomes %+v; want refused-b's error and the others batched", out)
	}
	if !slices.Equal(f.singles, []string{"first"}) || len(f.batches) != 1 {
		t.Errorf("batches %v, singles %v; want one batch and nothing alone", f.batches, f.singles)
	}
}

func TestFailedBatchRunsEachAlone(t *testing.T) {
	f := &fakeStore{}
	g := f.group(1, 64)
	out := startHeld(t, f, g, []string{"a", "bad", "c"})()
	if !errors.Is(out["bad"].err, errDuplicate) || out["a"] != (outcome{value: "alone a"}) || out["c"] != (outcome{value: "alone c"}) {
		t.Fatalf("outcomes %+v; want only bad's error, the others run alone", out)
	}
	slices.Sort(f.singles)
	if !slices.Equal(f.singles, []string{"a", "bad", "c", "first"}) {
		t.Errorf("singles %v; want each call of the failed batch alone, once", f.singles)
	}
}

func TestSingleFailureIsItsOwn(t *testing.T) {
	f := &fakeStore{}
	g := f.group(1, 64)
	if _, err := g.Do(t.Context(), "bad"); !errors.Is(err, errDuplicate) {
		t.Fatalf("bad alone: %v, want its duplicate key", err)
	}
	if v, err := g.Do(t.Context(), "next"); err != nil || v != "alone next" {
		t.Fatalf("next: %q, %v", v, err)
	}
}

func TestFinalErrorIsNotRetriedAlone(t *testing.T) {
	f := &fakeStore{batchErr: fmt.Errorf("%w: pool exhausted", errUnavailable)}
	g := f.group(1, 64)
	out := startHeld(t, f, g, []string{"a", "b"})()
	for _, it := range []string{"a", "b"} {
		if !errors.Is(out[it].err, errUnavailable) {
			t.Errorf("%s: %v, want the unavailable error", it, out[it].err)
		}
	}
	if !slices.Equal(f.singles, []string{"first"}) {
		t.Errorf("singles %v; want no call run again alone", f.singles)
	}
}

func TestDropsCallsThatGaveUp(t *testing.T) {
	f := &fakeStore{hold: make(chan struct{}), started: make(chan struct{}, 1)}
	g := f.group(1, 64)
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = g.Do(t.Context(), "first") })
	<-f.started
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := g.Do(ctx, "gave-up"); done <- err }()
	waitQueued(t, g, 1)
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

func TestPanicIsAnError(t *testing.T) {
	f := &fakeStore{}
	g := New(Config[string, string]{Single: f.single, MaxBatch: 64,
		Batch: func(ctx context.Context, items []string, results []Result[string]) error {
			if slices.Contains(items, "boom") {
				panic("boom")
			}
			return f.batch(ctx, items, results)
		}})
	f.hold, f.started = make(chan struct{}), make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = g.Do(t.Context(), "first") })
	<-f.started
	errs := make([]error, 2)
	for i, it := range []string{"a", "boom"} {
		wg.Go(func() { _, errs[i] = g.Do(t.Context(), it) })
	}
	waitQueued(t, g, 2)
	close(f.hold)
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d of the panicking batch answered success", i)
		}
	}
	if _, err := g.Do(t.Context(), "after"); err != nil {
		t.Fatalf("a call after the panic: %v", err)
	}
}
