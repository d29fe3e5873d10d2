package exactlyonce

import "sync"

// maxBatch bounds the items one call of a queue's run gets.
const maxBatch = 256

// queue hands the items added while it is busy to one call of run:
// concurrent requests' small writes to the shared cache (answered marks,
// intent drops) become one command instead of one each, sent from one
// goroutine instead of a goroutine per request. Nothing waits for them: a
// lost item costs a claim that expires or an intent the sweep settles.
// The goroutine is started with the first item and ends when nothing is
// left, so an idle service keeps none. The zero value is ready to use.
type queue[T any] struct {
	mu      sync.Mutex
	pending []T
	running bool
}

// add queues v for run; when no goroutine is draining the queue, it starts
// one with spawn. run gets at most maxBatch items a call, in the order
// they were added, and is never called for none.
func (q *queue[T]) add(v T, spawn func(func()), run func([]T)) {
	q.mu.Lock()
	q.pending = append(q.pending, v)
	if q.running {
		q.mu.Unlock()
		return
	}
	q.running = true
	q.mu.Unlock()
	spawn(func() {
		for {
			q.mu.Lock()
			batch := q.pending
			q.pending = nil
			if len(batch) == 0 {
				q.running = false
				q.mu.Unlock()
				return
			}
			q.mu.Unlock()
			for len(batch) > 0 {
				n := min(len(batch), maxBatch)
				run(batch[:n])
				batch = batch[n:]
			}
		}
	})
}
