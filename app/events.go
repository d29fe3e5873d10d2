package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrTooManyWaiters: the account already has EventsConfig.MaxWaiters
// requests waiting for events in this process.
var ErrTooManyWaiters = errors.New("too many requests waiting for events")

// Events API defaults.
const (
	DefaultEventRetention  = 30 * 24 * time.Hour
	DefaultMaxEventWaiters = 10
	// MaxEventWait bounds a long-poll, 5 s inside quitad's 30 s write
	// timeout and the idle timeouts of common proxies.
	MaxEventWait = 25 * time.Second
)

// EventsConfig tunes the events API.
type EventsConfig struct {
	// Retention is how long events are shown and kept (default 30 days).
	Retention time.Duration
	// MaxWaiters bounds the long-polls of one account and mode in one
	// process (default 10).
	MaxWaiters int
	// PollEvery is how often, while long-polls wait, the process looks
	// for new events: default 250 ms, or 2 s (a safety net) with
	// EventsCommitted. It reads the database, so events written by any
	// process end a wait.
	PollEvery time.Duration
	// EventsCommitted, when set, receives (coalesced) when outbox events
	// are committed, in this process or another: the process then looks
	// at once, so a wait answers without waiting for the poll.
	EventsCommitted <-chan struct{}
	// LateCommitSlack is how far back in write order a waiting long-poll
	// looks again past what it has seen (default 2000 events): an event's
	// place is taken when it is written, before its transaction commits,
	// so one committing after a later one can land behind a place already
	// seen. It covers that many events written meanwhile by every process
	// together.
	LateCommitSlack int64
}

// maxWakeScopes bounds the scopes one look for new events wakes; the rest
// are looked at again on the next one.
const maxWakeScopes = 1000

// EventService serves the events API (the outbox as merchants see it) and
// deletes events past their retention.
//
// Long-polls wait without reading the database. While any wait, one
// goroutine per process (watch) looks for new events on each commit signal
// and poll: one scan of the write-order index since the last look, which
// names the scopes (account, mode) that have new events; it wakes the
// waits of those scopes only, and each looks again at its page restricted
// to what was written since it last looked (EventQuery.AfterSeq). So a
// wait costs nothing while its scope is quiet, whatever other tenants
// write, and a little when its scope writes, whatever its filter.
type EventService struct {
	store ports.EventOutbox
	clock ports.Clock
	cfg   EventsConfig

	mu      sync.Mutex
	waiting map[ports.Scope]map[*eventWaiter]struct{}
	// stop, closed by StopWaiting, ends every wait at once.
	stop     chan struct{}
	stopOnce sync.Once
	// watching tells whether the watch goroutine runs; it stops when the
	// last wait leaves.
	watching bool
}

// eventWaiter is one waiting long-poll.
type eventWaiter struct {
	// wake is signalled (without blocking) when the scope has events
	// written after seen.
	wake chan struct{}
	// newest is the newest place in write order of the scope's events
	// watch found (under EventService.mu).
	newest int64
}

// NewEventService wires the events API.
func NewEventService(store ports.EventOutbox, clock ports.Clock, cfg EventsConfig) *EventService {
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultEventRetention
	}
	if cfg.MaxWaiters <= 0 {
		cfg.MaxWaiters = DefaultMaxEventWaiters
	}
	if cfg.LateCommitSlack <= 0 {
		cfg.LateCommitSlack = 2000
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 250 * time.Millisecond
		if cfg.EventsCommitted != nil {
			cfg.PollEvery = 2 * time.Second
		}
	}
	return &EventService{store: store, clock: clock, cfg: cfg, waiting: map[ports.Scope]map[*eventWaiter]struct{}{},
		stop: make(chan struct{})}
}

// List returns a page of the caller's events within the retention. With
// wait > 0 and nothing to show, it waits up to wait (at most MaxEventWait)
// for a matching event to be written, and answers the empty page if none
// is; ErrTooManyWaiters when the scope already has MaxWaiters waiting.
func (s *EventService) List(ctx context.Context, q ports.EventQuery, wait time.Duration) (ports.EventPage, error) {
	if wait <= 0 {
		return s.list(ctx, q)
	}
	// Registered before the first read: an event written after it is seen
	// by the read or wakes the wait.
	w, err := s.enter(q.Scope)
	if err != nil {
		return ports.EventPage{}, err
	}
	defer s.leave(q.Scope, w)
	head, err := s.store.EventHead(ctx)
	if err != nil {
		return ports.EventPage{}, err
	}
	page, err := s.list(ctx, q)
	if err != nil || len(page.Events) > 0 {
		return page, err
	}
	after := q
	after.AfterSeq = max(head-s.cfg.LateCommitSlack, 0) // 0: no bound
	// Waiting is real time (a request's life), not the business clock.
	deadline := time.NewTimer(min(wait, MaxEventWait))
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return ports.EventPage{}, ctx.Err()
		case <-deadline.C:
			return s.list(ctx, q)
		case <-s.stop:
			return s.list(ctx, q)
		case <-w.wake:
		}
		s.mu.Lock()
		newest := w.newest
		s.mu.Unlock()
		// Only what was written since the last look (and a slack for
		// late commits) is read again: the page's filter already
		// rejected everything before.
		more, err := s.list(ctx, after)
		if err != nil || len(more.Events) > 0 {
			if err == nil {
				// The whole page as the caller asked it, now that it has
				// something: the same query without the bound.
				return s.list(ctx, q)
			}
			return more, err
		}
		after.AfterSeq = max(after.AfterSeq, newest-s.cfg.LateCommitSlack)
	}
}

// enter registers a wait of scope and starts the watch if none runs.
func (s *EventService) enter(scope ports.Scope) (*eventWaiter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.waiting[scope]
	if len(ws) >= s.cfg.MaxWaiters {
		return nil, ErrTooManyWaiters
	}
	if ws == nil {
		ws = map[*eventWaiter]struct{}{}
		s.waiting[scope] = ws
	}
	w := &eventWaiter{wake: make(chan struct{}, 1)}
	ws[w] = struct{}{}
	if !s.watching {
		s.watching = true
		go s.watch()
	}
	return w, nil
}

func (s *EventService) leave(scope ports.Scope, w *eventWaiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting[scope], w)
	if len(s.waiting[scope]) == 0 {
		delete(s.waiting, scope)
	}
}

// watch looks for new events while waits exist, waking the waits of the
// scopes that have some: on each commit signal one scan of what was written
// since its last look, and every PollEvery one that also reaches
// LateCommitSlack further back, for events whose transactions committed
// after later ones' (their waits would otherwise wake only with their
// scope's next event, or at their deadline). It ends when no wait is left,
// and at StopWaiting.
func (s *EventService) watch() {
	ctx := context.Background()
	tick := time.NewTicker(s.cfg.PollEvery)
	defer tick.Stop()
	since, started, late := int64(0), false, false
	for {
		if !started {
			head, err := s.store.EventHead(ctx)
			since, started = head, err == nil
		} else {
			from := since
			if late {
				from = max(since-s.cfg.LateCommitSlack, 0)
			}
			if scopes, err := s.store.EventScopesSince(ctx, from, maxWakeScopes); err == nil && len(scopes) < maxWakeScopes {
				since = max(since, s.wakeScopes(scopes))
			} else if err == nil {
				s.wakeScopes(scopes) // the rest on the next look, from the same place
			}
		}
		s.mu.Lock()
		if len(s.waiting) == 0 {
			s.watching = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		late = false
		select {
		case <-s.stop:
			s.mu.Lock()
			s.watching = false
			s.mu.Unlock()
			return
		case <-s.cfg.EventsCommitted: // nil without signals: never ready
		case <-tick.C:
			late = true
		}
	}
}

// wakeScopes wakes the waits of each scope whose newest event is newer
// than the wait knew, and returns the newest place among them.
func (s *EventService) wakeScopes(scopes []ports.ScopeSeq) int64 {
	var newest int64
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range scopes {
		newest = max(newest, sc.Seq)
		for w := range s.waiting[sc.Scope] {
			if sc.Seq <= w.newest {
				continue
			}
			w.newest = sc.Seq
			select {
			case w.wake <- struct{}{}:
			default: // a wake is pending
			}
		}
	}
	return newest
}

func (s *EventService) list(ctx context.Context, q ports.EventQuery) (ports.EventPage, error) {
	floor := s.clock.Now().Add(-s.cfg.Retention)
	if q.CreatedAfter == nil || q.CreatedAfter.Before(floor) {
		q.CreatedAfter = &floor
	}
	return s.store.ListEvents(ctx, q)
}

// StopWaiting answers every long-poll now and every later one at once:
// quitad calls it when it starts shutting down, so waiting clients do not
// hold the drain for up to MaxEventWait (they simply ask again, elsewhere).
func (s *EventService) StopWaiting() { s.stopOnce.Do(func() { close(s.stop) }) }

// Get returns one of the caller's events; ErrNotFound for another scope's
// event or one past its retention.
func (s *EventService) Get(ctx context.Context, scope ports.Scope, id string) (*domain.Event, error) {
	ev, err := s.store.GetEvent(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	if ev.CreatedAt.Before(s.clock.Now().Add(-s.cfg.Retention)) {
		return nil, ports.ErrNotFound
	}
	return ev, nil
}

// Prune deletes one batch of events past their retention that were
// already fanned out (deliveries keep their own copy of the payload). Safe
// to run in every process.
func (s *EventService) Prune(ctx context.Context) (int, error) {
	return s.store.DeleteEventsBefore(ctx, s.clock.Now().Add(-s.cfg.Retention), 1000)
}
