package httpapi

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
)

// AdmissionConfig bounds the requests the API works on at once (issue 17,
// graceful overload). The zero value of a field takes its default.
type AdmissionConfig struct {
	// MaxInFlight is how many requests may run at once (default 32). Tie
	// it to the database pool: quitad uses twice the pool size, since a
	// request holds a connection for only part of its life.
	MaxInFlight int
	// QueueWait is the longest a request waits for a place before it is
	// refused (default 10 ms), so a refusal is quick, never a timeout.
	QueueWait time.Duration
	// MaxQueue is how many requests may wait at once (default
	// MaxInFlight); beyond it a request is refused without waiting.
	MaxQueue int
	// RetryAfter is the Retry-After of a refusal, in seconds (default 1).
	RetryAfter int
}

// Admission is a concurrency limiter in front of the API's handlers: a
// request runs when one of MaxInFlight places is free, waits at most
// QueueWait in a bounded FIFO queue otherwise, and is refused with 503
// service_unavailable and Retry-After when it cannot get one. Refused
// requests did nothing (the handler never ran), so a retry with the same
// Idempotency-Key is safe. Past capacity the server thus keeps serving
// what it can at normal latency and sheds the rest at once, instead of
// letting every request queue (in the pool, in Postgres) until all time
// out. A nil *Admission admits everything.
type Admission struct {
	cfg AdmissionConfig

	mu       sync.Mutex
	inFlight int
	queue    []chan struct{} // FIFO of waiting requests; closed when granted

	admitted, shed atomic.Int64
}

// NewAdmission builds a limiter; see AdmissionConfig for the defaults.
func NewAdmission(cfg AdmissionConfig) *Admission {
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 32
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = 10 * time.Millisecond
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = cfg.MaxInFlight
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 1
	}
	return &Admission{cfg: cfg}
}

// errOverloaded answers a request the limiter refused.
func (a *Admission) errOverloaded() *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Type: typeAPI, Code: "service_unavailable",
		Message:    "the service is at capacity and did not process this request; retry after the Retry-After delay using the same Idempotency-Key",
		retryAfter: a.cfg.RetryAfter}
}

// acquire takes a place, waiting at most QueueWait; false: refused.
func (a *Admission) acquire(r *http.Request) bool {
	a.mu.Lock()
	if a.inFlight < a.cfg.MaxInFlight && len(a.queue) == 0 {
		a.inFlight++
		a.mu.Unlock()
		return true
	}
	if len(a.queue) >= a.cfg.MaxQueue {
		a.mu.Unlock()
		return false
	}
	ch := make(chan struct{})
	a.queue = append(a.queue, ch)
	a.mu.Unlock()

	t := time.NewTimer(a.cfg.QueueWait)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-r.Context().Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, c := range a.queue {
		if c == ch {
			a.queue = append(a.queue[:i], a.queue[i+1:]...)
			return false
		}
	}
	// Granted while giving up: the place is ours; hand it on.
	a.releaseLocked()
	return false
}

// release frees a place, granting it to the oldest waiter if any.
func (a *Admission) release() {
	a.mu.Lock()
	a.releaseLocked()
	a.mu.Unlock()
}

func (a *Admission) releaseLocked() {
	if len(a.queue) > 0 {
		ch := a.queue[0]
		a.queue[0] = nil
		a.queue = a.queue[1:]
		close(ch) // the place passes on: inFlight unchanged
		return
	}
	a.inFlight--
}

// Stats reports how many requests were admitted and refused so far.
func (a *Admission) Stats() (admitted, shed int64) {
	if a == nil {
		return 0, 0
	}
	return a.admitted.Load(), a.shed.Load()
}

// unlimitedRoutes never wait for a place: probes and metrics must answer
// while the API is saturated.
var unlimitedRoutes = map[string]bool{"healthz": true, "readyz": true, "metrics": true}

// unlimited reports the requests the limiter lets through: the probes,
// and event long-polls (GET /v1/events?wait=N), which would hold a place
// for up to 30 s while mostly sleeping; app.EventService bounds them per
// account instead.
func unlimited(r *http.Request) bool {
	cr := mux.CurrentRoute(r)
	if cr == nil {
		return false
	}
	name := cr.GetName()
	return unlimitedRoutes[name] || name == "events.list" && r.URL.Query().Get("wait") != ""
}

// middleware applies the limiter to every matched route but the probes.
func (a *Admission) middleware(next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if unlimited(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !a.acquire(r) {
			a.shed.Add(1)
			writeError(w, r, a.errOverloaded())
			return
		}
		a.admitted.Add(1)
		defer a.release()
		next.ServeHTTP(w, r)
	})
}
