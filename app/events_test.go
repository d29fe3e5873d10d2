package app_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// eventLog is an in-memory events store: events in write order (their
// place is their index + 1), and the ListEvents calls each scope made.
type eventLog struct {
	mu     sync.Mutex
	events []domain.Event
	lists  map[ports.Scope][]ports.EventQuery
}

func newEventLog() *eventLog { return &eventLog{lists: map[ports.Scope][]ports.EventQuery{}} }

func (l *eventLog) write(scope ports.Scope, typ domain.EventType) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, domain.Event{ID: "evt_" + string(rune('a'+len(l.events))), AccountID: scope.AccountID,
		Mode: scope.Mode, Type: typ, CreatedAt: t0})
}

// calls is the ListEvents calls of scope so far.
func (l *eventLog) calls(scope ports.Scope) []ports.EventQuery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lists[scope])
}

func (l *eventLog) store() *mocks.EventOutboxMock {
	return &mocks.EventOutboxMock{
		ListEventsFunc: func(_ context.Context, q ports.EventQuery) (ports.EventPage, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.lists[q.Scope] = append(l.lists[q.Scope], q)
			var page ports.EventPage
			for i := len(l.events) - 1; i >= 0 && int64(i+1) > q.AfterSeq; i-- {
				e := l.events[i]
				if e.AccountID == q.AccountID && e.Mode == q.Mode && (len(q.Types) == 0 || slices.Contains(q.Types, e.Type)) {
					page.Events = append(page.Events, e)
				}
			}
			return page, nil
		},
		EventHeadFunc: func(context.Context) (int64, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			return int64(len(l.events)), nil
		},
		EventScopesSinceFunc: func(_ context.Context, after int64, limit int) ([]ports.ScopeSeq, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			newest := map[ports.Scope]int64{}
			for i := max(after, 0); i < int64(len(l.events)); i++ {
				e := l.events[i]
				newest[ports.Scope{AccountID: e.AccountID, Mode: e.Mode}] = i + 1
			}
			var out []ports.ScopeSeq
			for sc, seq := range newest {
				out = append(out, ports.ScopeSeq{Scope: sc, Seq: seq})
			}
			return out[:min(len(out), limit)], nil
		},
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never", what)
		}
	}
}

var (
	scopeA     = ports.Scope{AccountID: "acct_a", Mode: domain.ModeTest}
	scopeALive = ports.Scope{AccountID: "acct_a", Mode: domain.ModeLive}
	scopeB     = ports.Scope{AccountID: "acct_b", Mode: domain.ModeTest}
)

// A scope's long-polls beyond MaxWaiters are refused at once; the same
// account's other mode and another account still wait, and a wait
// without events ends at its deadline.
func TestEventWaitersAreBoundedPerScope(t *testing.T) {
	t.Parallel()
	log := newEventLog()
	s := app.NewEventService(log.store(), &mocks.ClockMock{NowFunc: func() time.Time { return t0 }},
		app.EventsConfig{MaxWaiters: 2, PollEvery: 5 * time.Millisecond})
	defer s.StopWaiting()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			p, err := s.List(context.Background(), ports.EventQuery{Scope: scopeA, Limit: 10}, 10*time.Second)
			if err != nil || len(p.Events) != 1 {
				t.Errorf("waiter: %v %v", p.Events, err)
			}
		})
	}
	waitFor(t, "both waiters read once", func() bool { return len(log.calls(scopeA)) >= 2 })
	if _, err := s.List(context.Background(), ports.EventQuery{Scope: scopeA, Limit: 10}, time.Second); !errors.Is(err, app.ErrTooManyWaiters) {
		t.Errorf("third waiter of the scope: %v, want ErrTooManyWaiters", err)
	}
	if _, err := s.List(context.Background(), ports.EventQuery{Scope: scopeA, Limit: 10}, 0); err != nil {
		t.Errorf("list without wait: %v", err)
	}
	for _, other := range []ports.Scope{scopeALive, scopeB} {
		start := time.Now()
		p, err := s.List(context.Background(), ports.EventQuery{Scope: other, Limit: 10}, 50*time.Millisecond)
		if err != nil || len(p.Events) != 0 || time.Since(start) < 50*time.Millisecond {
			t.Errorf("%v: %v %v after %v", other, p.Events, err, time.Since(start))
		}
	}
	log.write(scopeA, domain.EventChargePaid)
	wg.Wait()
}

// Only the waits of the scope whose events were written look again, and
// only at what was written since: a tenant writing never makes another
// tenant's waits read, and a filter that matches nothing re-reads only
// the new events of its own scope.
func TestEventWaitsWakeOnlyTheirScope(t *testing.T) {
	t.Parallel()
	log := newEventLog()
	for range 50 {
		log.write(scopeA, domain.EventChargeCreated) // history the filter rejects
	}
	signal := make(chan struct{}, 1)
	s := app.NewEventService(log.store(), &mocks.ClockMock{NowFunc: func() time.Time { return t0 }},
		app.EventsConfig{EventsCommitted: signal, PollEvery: time.Hour, LateCommitSlack: 5})
	defer s.StopWaiting()
	done := make(chan ports.EventPage, 2)
	go func() {
		p, _ := s.List(context.Background(), ports.EventQuery{Scope: scopeA, Limit: 10, Types: []domain.EventType{domain.EventChargeRefunded}}, 20*time.Second)
		done <- p
	}()
	go func() {
		p, _ := s.List(context.Background(), ports.EventQuery{Scope: scopeB, Limit: 10}, 20*time.Second)
		done <- p
	}()
	waitFor(t, "both waiting", func() bool { return len(log.calls(scopeA)) == 1 && len(log.calls(scopeB)) == 1 })
	time.Sleep(20 * time.Millisecond) // the watch has taken its starting place
	for range 20 {                    // another tenant's creates, each signalled
		log.write(scopeALive, domain.EventChargeCreated)
		signal <- struct{}{}
	}
	log.write(scopeA, domain.EventChargeCreated) // its own scope: not a match
	signal <- struct{}{}
	waitFor(t, "the scope's wait looked again", func() bool { return len(log.calls(scopeA)) == 2 })
	if c := log.calls(scopeA)[1]; c.AfterSeq <= 0 {
		t.Errorf("the wait looked at its whole history again (AfterSeq %d)", c.AfterSeq)
	}
	if n := len(log.calls(scopeB)); n != 1 {
		t.Errorf("scope B read %d times while only other scopes wrote, want 1", n)
	}
	log.write(scopeB, domain.EventChargePaid)
	signal <- struct{}{}
	select {
	case p := <-done:
		if len(p.Events) != 1 || p.Events[0].AccountID != "acct_b" {
			t.Errorf("scope B's wait answered %v", p.Events)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a commit in scope B did not wake its wait")
	}
	if n := len(log.calls(scopeA)); n != 2 {
		t.Errorf("scope A read %d times, want 2 (once, and once for its own write)", n)
	}
	log.write(scopeA, domain.EventChargeRefunded)
	signal <- struct{}{}
	select {
	case p := <-done:
		if len(p.Events) != 1 || p.Events[0].Type != domain.EventChargeRefunded {
			t.Errorf("scope A's wait answered %v", p.Events)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a matching event did not end scope A's wait")
	}
}

// Without commit signals the watch polls, and a wait still ends when its
// scope writes.
func TestEventWaitsPollWithoutSignals(t *testing.T) {
	t.Parallel()
	log := newEventLog()
	s := app.NewEventService(log.store(), &mocks.ClockMock{NowFunc: func() time.Time { return t0 }},
		app.EventsConfig{PollEvery: 5 * time.Millisecond})
	defer s.StopWaiting()
	done := make(chan ports.EventPage, 1)
	go func() {
		p, _ := s.List(context.Background(), ports.EventQuery{Scope: scopeA, Limit: 10}, 20*time.Second)
		done <- p
	}()
	waitFor(t, "waiting", func() bool { return len(log.calls(scopeA)) == 1 })
	log.write(scopeA, domain.EventChargePaid)
	select {
	case p := <-done:
		if len(p.Events) != 1 {
			t.Errorf("answered %v", p.Events)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the poll did not wake the wait")
	}
}

// TestEventRetention: events older than the retention are hidden from Get
// and List, and Prune deletes before the same cut.
func TestEventRetention(t *testing.T) {
	t.Parallel()
	old := &domain.Event{ID: "evt_old", CreatedAt: t0.Add(-30*24*time.Hour - time.Second)}
	store := &mocks.EventOutboxMock{
		GetEventFunc:           func(context.Context, ports.Scope, string) (*domain.Event, error) { return old, nil },
		ListEventsFunc:         func(context.Context, ports.EventQuery) (ports.EventPage, error) { return ports.EventPage{}, nil },
		DeleteEventsBeforeFunc: func(context.Context, time.Time, int) (int, error) { return 7, nil },
	}
	s := app.NewEventService(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}, app.EventsConfig{})
	if _, err := s.Get(context.Background(), scopeA, old.ID); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("Get of an event past retention: %v", err)
	}
	early := t0.Add(-90 * 24 * time.Hour)
	if _, err := s.List(context.Background(), ports.EventQuery{Scope: scopeA, Limit: 5, CreatedAfter: &early}, 0); err != nil {
		t.Fatal(err)
	}
	cut := t0.Add(-30 * 24 * time.Hour)
	if c := store.ListEventsCalls(); len(c) != 1 || c[0].Q.CreatedAfter == nil || !c[0].Q.CreatedAfter.Equal(cut) {
		t.Errorf("list floor %+v, want %v", c, cut)
	}
	if n, err := s.Prune(context.Background()); n != 7 || err != nil {
		t.Errorf("Prune %d %v", n, err)
	}
	if c := store.DeleteEventsBeforeCalls(); len(c) != 1 || !c[0].T.Equal(cut) || c[0].Limit <= 0 {
		t.Errorf("prune %+v", c)
	}
}

// TestStopWaitingAnswersLongPolls: a shutdown answers the waiting
// long-polls at once, and later ones do not wait.
func TestStopWaitingAnswersLongPolls(t *testing.T) {
	t.Parallel()
	log := newEventLog()
	s := app.NewEventService(log.store(), &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}, app.EventsConfig{})
	q := ports.EventQuery{Scope: scopeA, Limit: 10}
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		_, _ = s.List(context.Background(), q, 20*time.Second)
		done <- time.Since(start)
	}()
	waitFor(t, "waiting", func() bool { return len(log.calls(scopeA)) == 1 })
	s.StopWaiting()
	select {
	case took := <-done:
		if took > 5*time.Second {
			t.Errorf("the wait ended after %v", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("StopWaiting did not end the wait")
	}
	start := time.Now()
	if _, err := s.List(context.Background(), q, 20*time.Second); err != nil || time.Since(start) > time.Second {
		t.Errorf("a long-poll after StopWaiting: %v after %v", err, time.Since(start))
	}
}
