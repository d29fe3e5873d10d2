//go:build chaos

package chaos

import (
	"fmt"
	"sync"
	"time"
)

// attempt is one HTTP exchange; status 0 is a transport error (refused,
// reset, timed out).
type attempt struct {
	start, end time.Duration // since the run's start
	status     int
	op         string
}

// keyRec is everything the clients learned about one charge
// Idempotency-Key.
type keyRec struct {
	key    string
	body   []byte
	ids    map[string]bool // charge ids the key answered with: must stay ≤ 1
	acked  bool            // a 201 reached the client
	first  time.Duration   // first send
	inUse  time.Duration   // first 409 idempotency_key_in_use, or -1
	blocks time.Duration   // longest stretch of 409 in_use before an answer
	trials int             // attempts beyond the first
}

// refundRec is one refund Idempotency-Key.
type refundRec struct {
	key, chargeID string
	amount        int64
	ids           map[string]bool
	acked         bool
}

// chargeRec is an acknowledged charge.
type chargeRec struct {
	id       string // ch_...
	amount   int64
	paidSeen bool // an answer said paid
	refunded int64
}

// recorder collects the run's observations from every goroutine.
type recorder struct {
	t0 time.Time

	mu         sync.Mutex
	attempts   []attempt
	keys       map[string]*keyRec
	refunds    map[string]*refundRec
	charges    map[string]*chargeRec
	ops        map[string]int
	violations []string
}

func newRecorder(t0 time.Time) *recorder {
	return &recorder{t0: t0, keys: map[string]*keyRec{}, refunds: map[string]*refundRec{},
		charges: map[string]*chargeRec{}, ops: map[string]int{}}
}

func (r *recorder) since() time.Duration { return time.Since(r.t0) }

func (r *recorder) addAttempt(a attempt) {
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
}

func (r *recorder) count(op string) {
	r.mu.Lock()
	r.ops[op]++
	r.mu.Unlock()
}

// violate records a broken invariant seen while the load ran.
func (r *recorder) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.violations) < 1000 {
		r.violations = append(r.violations, fmt.Sprintf(format, args...))
	}
}

func (r *recorder) newKey(key string, body []byte) *keyRec {
	k := &keyRec{key: key, body: body, ids: map[string]bool{}, first: r.since(), inUse: -1}
	r.mu.Lock()
	r.keys[key] = k
	r.mu.Unlock()
	return k
}

// answered notes the charge id a key answered with; a second, different
// id is a duplicate charge.
func (r *recorder) answered(k *keyRec, id string, amount int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k.ids[id] = true
	k.acked = true
	if len(k.ids) > 1 {
		r.violations = append(r.violations, fmt.Sprintf("key %s answered with %d charges: %v", k.key, len(k.ids), k.ids))
	}
	if r.charges[id] == nil {
		r.charges[id] = &chargeRec{id: id, amount: amount}
	}
}

func (r *recorder) blocked(k *keyRec, d time.Duration) {
	r.mu.Lock()
	if d > k.blocks {
		k.blocks = d
	}
	r.mu.Unlock()
}

func (r *recorder) markPaid(id string) {
	r.mu.Lock()
	if c := r.charges[id]; c != nil {
		c.paidSeen = true
	}
	r.mu.Unlock()
}

func (r *recorder) newRefund(key, chargeID string, amount int64) *refundRec {
	f := &refundRec{key: key, chargeID: chargeID, amount: amount, ids: map[string]bool{}}
	r.mu.Lock()
	r.refunds[key] = f
	r.mu.Unlock()
	return f
}

func (r *recorder) refundAnswered(f *refundRec, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f.ids[id] = true
	if !f.acked {
		f.acked = true
		if c := r.charges[f.chargeID]; c != nil {
			c.refunded += f.amount
		}
	}
	if len(f.ids) > 1 {
		r.violations = append(r.violations, fmt.Sprintf("refund key %s answered with %d refunds", f.key, len(f.ids)))
	}
}
