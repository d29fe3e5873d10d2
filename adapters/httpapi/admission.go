package httpapi

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
)

// AdmissionConfig bounds the requests the API works on at once, so
// overload is refused rather than queued. The zero value of a field takes
// its default.
type AdmissionConfig struct {
	// MaxInFlight is how many requests may run at once (default 32). Tie
	// it to the database pool: quitad uses four places per pooled
	// connection, since a request holds a connection for only part of its
	// life.
	MaxInFlight int
	// QueueWait is the longest a request waits for a place before it is
	// refused (default 10 ms), so a refusal is quick, never a timeout.
	QueueWait time.Duration
	// SheddingWait replaces QueueWait while the limiter is shedding: a
	// request was refused in the last ShedWindow (default 1 ms). Under
	// sustained overload a waiter is mostly refused anyway, and its wait
	// only delays the refusal; the short wait still hands a place freed
	// at that instant to the request that just missed it.
	SheddingWait time.Duration
	// ShedWindow is how long after a refusal the limiter keeps the short
	// wait (default 100 ms).
	ShedWindow time.Duration
	// MaxQueue is how many requests may wait at once (default
	// MaxInFlight); beyond it a request is refused without waiting.
	MaxQueue int
	// RetryAfter is the Retry-After of a refusal, in seconds (default 1).
	RetryAfter int
}

// Admission is a concurrency limiter in front of the API's handlers: a
// request runs when one of MaxInFlight places is free, waits at most
// QueueWait in a bounded FIFO queue otherwise (SheddingWait when a
// request was refused in the last ShedWindow), and is refused with 503
// service_unavailable and Retry-After when it cannot get one. Refused
// requests did nothing (the handler never ran), so a retry with the same
// Idempotency-Key is safe. Past capacity the server thus keeps serving
// what it can at normal latency and sheds the rest at once, instead of
// letting every request queue (in the pool, in Postgres) until all time
// out. A nil *Admission admits everything.
//
// A place covers the request's work only, never a wait on the client or
// on something outside that a caller controls: the body is read before a
// place is taken (readAhead), and the app layer gives the place back
// around a webhook URL's DNS lookup (app.AdmissionPlace).
type Admission struct {
	cfg AdmissionConfig

	mu       sync.Mutex
	inFlight int
	queue    []chan struct{} // FIFO of waiting requests; closed when granted

	// largeBodies holds one token per body larger than smallBody being
	// read ahead (MaxInFlight tokens), so at most MaxInFlight such bodies
	// are being read at once. A read body keeps its memory while the
	// request queues and runs, so large bodies held at once are bounded by
	// the reads, the places and the queue together (~(2 × MaxInFlight +
	// MaxQueue) × maxBody), not by the tokens alone.
	largeBodies chan struct{}

	// lastRefusal is when acquire last refused a request (under mu).
	lastRefusal time.Time

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
	if cfg.SheddingWait <= 0 {
		cfg.SheddingWait = time.Millisecond
	}
	if cfg.ShedWindow <= 0 {
		cfg.ShedWindow = 100 * time.Millisecond
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = cfg.MaxInFlight
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 1
	}
	return &Admission{cfg: cfg, largeBodies: make(chan struct{}, cfg.MaxInFlight)}
}

// errOverloaded answers a request the limiter refused.
func (a *Admission) errOverloaded() *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Type: typeAPI, Code: "service_unavailable",
		Message:    "the service is at capacity and did not process this request; retry after the Retry-After delay using the same Idempotency-Key",
		retryAfter: a.cfg.RetryAfter}
}

// acquire takes a place, waiting at most QueueWait (SheddingWait while
// shedding); false: refused.
func (a *Admission) acquire(ctx context.Context) bool {
	a.mu.Lock()
	if a.inFlight < a.cfg.MaxInFlight && len(a.queue) == 0 {
		a.inFlight++
		a.mu.Unlock()
		return true
	}
	now := time.Now()
	if len(a.queue) >= a.cfg.MaxQueue {
		a.lastRefusal = now
		a.mu.Unlock()
		return false
	}
	wait := a.cfg.QueueWait
	if now.Sub(a.lastRefusal) < a.cfg.ShedWindow {
		wait = min(wait, a.cfg.SheddingWait)
	}
	ch := make(chan struct{})
	a.queue = append(a.queue, ch)
	a.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	timedOut := false
	select {
	case <-ch:
		return true
	case <-t.C:
		timedOut = true
	case <-ctx.Done(): // the client left: no sign of overload
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, c := range a.queue {
		if c == ch {
			a.queue = append(a.queue[:i], a.queue[i+1:]...)
			if timedOut {
				a.lastRefusal = time.Now()
			}
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

// Places is how many requests may run at once (0: a nil limiter, no limit).
func (a *Admission) Places() int {
	if a == nil {
		return 0
	}
	return a.cfg.MaxInFlight
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
// and event long-polls (GET /v1/events?wait=N with N > 0, as the handler
// reads it), which would hold a place for up to 25 s while mostly
// sleeping; app.EventService bounds them per account instead. A wait of 0
// or one the handler refuses is an ordinary request and takes a place.
func unlimited(r *http.Request) bool {
	cr := mux.CurrentRoute(r)
	if cr == nil {
		return false
	}
	name := cr.GetName()
	if unlimitedRoutes[name] {
		return true
	}
	if name != "events.list" {
		return false
	}
	wait, err := eventWait(r.URL.Query().Get("wait"))
	return err == nil && wait > 0
}

// middleware applies the limiter to every matched route but the probes
// and long-polls. The body is read first (readAhead), so a client sending
// it slowly holds no place while it does.
func (a *Admission) middleware(next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if unlimited(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !a.readAhead(r) || !a.acquire(r.Context()) {
			a.shed.Add(1)
			writeError(w, r, a.errOverloaded())
			return
		}
		a.admitted.Add(1)
		st := stateOf(r.Context())
		if st != nil {
			st.admission, st.held = a, true
		}
		defer func() {
			// The request may have left its place (app.AdmissionPlace).
			if st == nil || st.held {
				a.release()
			}
			if st != nil {
				st.admission, st.held = nil, false
			}
		}()
		next.ServeHTTP(w, r)
	})
}
