package app

import "sync"

// maxBatch bounds the items one call of a batcher's run gets.
const maxBatch = 256

// batcher hands the items added while it is busy to one call of run:
// concurrent requests' small writes to the shared cache (the cob intents)
// become one command instead of one each, sent from one goroutine instead
// of a goroutine per request (issue 17). The goroutine is started with the
// first item and ends when nothing is left, so an idle service keeps none.
// The zero value is ready to use.
type batcher[T any] struct {
	mu      sync.Mutex
	pending []T
	running bool
}

// add queues v for run; when no goroutine is draining the queue, it starts
// one with spawn. run gets at most maxBatch items a call, in the order
// they were added, and is never called for none.
func (b *batcher[T]) add(v T, spawn func(func()), run func([]T)) {
	b.mu.Lock()
	b.pending = append(b.pending, v)
	if b.running {
		b.mu.Unlock()
		return
	}
	b.running = true
	b.mu.Unlock()
	spawn(func() {
		for {
			b.mu.Lock()
			batch := b.pending
			b.pending = nil
			if len(batch) == 0 {
				b.running = false
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			for len(batch) > 0 {
				n := min(len(batch), maxBatch)
				run(batch[:n])
				batch = batch[n:]
			}
		}
	})
}
