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
	// MaxWaiters bounds the long-polls of one account (both modes) in one
	// process (default 10).
	MaxWaiters int
	// PollEvery is how often a long-poll looks for new events: default
	// 250 ms, or 2 s (a safety net) with EventsCommitted. It reads the
	// database, so events written by any process end the wait.
	PollEvery time.Duration
	// EventsCommitted, when set, receives (coalesced) when outbox events
	// are committed, in this process or another: every waiting long-poll
	// then looks at once, so it answers without waiting for its poll.
	EventsCommitted <-chan struct{}
}

// EventService serves the events API (the outbox as merchants see it) and
// deletes events past their retention.
type EventService struct {
	store ports.EventOutbox
	clock ports.Clock
	cfg   EventsConfig

	mu      sync.Mutex
	waiting map[string]int
	// stop, closed by StopWaiting, ends every wait at once.
	stop     chan struct{}
	stopOnce sync.Once
	// committed is closed (and replaced) each time EventsCommitted
	// fires: one broadcast to every waiter; relay starts the goroutine
	// that does it on the first wait.
	committed chan struct{}
	relay     sync.Once
}

// NewEventService wires the events API.
func NewEventService(store ports.EventOutbox, clock ports.Clock, cfg EventsConfig) *EventService {
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultEventRetention
	}
	if cfg.MaxWaiters <= 0 {
		cfg.MaxWaiters = DefaultMaxEventWaiters
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 250 * time.Millisecond
		if cfg.EventsCommitted != nil {
			cfg.PollEvery = 2 * time.Second
		}
	}
	return &EventService{store: store, clock: clock, cfg: cfg, waiting: map[string]int{}, stop: make(chan struct{}),
		committed: make(chan struct{})}
}

// List returns a page of the caller's events within the retention. With
// wait > 0 and nothing to show, it waits up to wait (at most MaxEventWait)
// for a matching event to be written, and answers the empty page if none
// is; ErrTooManyWaiters when the account already has MaxWaiters waiting.
func (s *EventService) List(ctx context.Context, q ports.EventQuery, wait time.Duration) ([]domain.Event, bool, error) {
	// Taken before the first read, so a commit between the read and the
	// wait still wakes it.
	committed := s.commits()
	evs, more, err := s.list(ctx, q)
	if err != nil || len(evs) > 0 || wait <= 0 {
		return evs, more, err
	}
	if !s.enter(q.AccountID) {
		return nil, false, ErrTooManyWaiters
	}
	defer s.leave(q.AccountID)
	s.relay.Do(func() {
		if s.cfg.EventsCommitted != nil {
			go s.relayCommits()
		}
	})
	// Waiting is real time (a request's life), not the business clock.
	deadline := time.NewTimer(min(wait, MaxEventWait))
	defer deadline.Stop()
	tick := time.NewTicker(s.cfg.PollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-deadline.C:
			return s.list(ctx, q)
		case <-s.stop:
			return s.list(ctx, q)
		case <-committed:
		case <-tick.C:
		}
		committed = s.commits()
		if evs, more, err = s.list(ctx, q); err != nil || len(evs) > 0 {
			return evs, more, err
		}
	}
}

// commits returns the channel the next commit signal closes.
func (s *EventService) commits() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.committed
}

// relayCommits turns each commit signal into one broadcast to every
// waiter, until StopWaiting.
func (s *EventService) relayCommits() {
	for {
		select {
		case <-s.stop:
			return
		case <-s.cfg.EventsCommitted:
			s.mu.Lock()
			close(s.committed)
			s.committed = make(chan struct{})
			s.mu.Unlock()
		}
	}
}

func (s *EventService) list(ctx context.Context, q ports.EventQuery) ([]domain.Event, bool, error) {
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

func (s *EventService) enter(account string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting[account] >= s.cfg.MaxWaiters {
		return false
	}
	s.waiting[account]++
	return true
}

func (s *EventService) leave(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting[account]--; s.waiting[account] <= 0 {
		delete(s.waiting, account)
	}
}
