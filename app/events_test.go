package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// TestEventWaitersAreBoundedPerAccount: an account's long-polls beyond
// MaxWaiters are refused at once, another account still waits, and a
// wait without events ends at its deadline.
func TestEventWaitersAreBoundedPerAccount(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	store := &mocks.EventOutboxMock{ListEventsFunc: func(ctx context.Context, q ports.EventQuery) ([]domain.Event, bool, error) {
		select {
		case <-release:
			return []domain.Event{{ID: "evt_x"}}, false, nil
		default:
			return nil, false, nil
		}
	}}
	s := app.NewEventService(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }},
		app.EventsConfig{MaxWaiters: 2, PollEvery: 5 * time.Millisecond})
	a := ports.Scope{AccountID: "acct_a", Mode: domain.ModeTest}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			evs, _, err := s.List(context.Background(), ports.EventQuery{Scope: a, Limit: 10}, 10*time.Second)
			if err != nil || len(evs) != 1 {
				t.Errorf("waiter: %v %v", evs, err)
			}
		})
	}
	// Wait until both are waiting (each has polled at least twice).
	for deadline := time.Now().Add(5 * time.Second); len(store.ListEventsCalls()) < 4; {
		if time.Now().After(deadline) {
			t.Fatal("waiters never polled")
		}
		time.Sleep(time.Millisecond)
	}
	live := ports.Scope{AccountID: "acct_a", Mode: domain.ModeLive}
	if _, _, err := s.List(context.Background(), ports.EventQuery{Scope: live, Limit: 10}, time.Second); !errors.Is(err, app.ErrTooManyWaiters) {
		t.Errorf("third waiter of the account (other mode): %v, want ErrTooManyWaiters", err)
	}
	// Without wait, no place is needed.
	if _, _, err := s.List(context.Background(), ports.EventQuery{Scope: a, Limit: 10}, 0); err != nil {
		t.Errorf("list without wait: %v", err)
	}
	// Another account waits, and its wait ends at the deadline.
	start := time.Now()
	b := ports.Scope{AccountID: "acct_b", Mode: domain.ModeTest}
	if evs, _, err := s.List(context.Background(), ports.EventQuery{Scope: b, Limit: 10}, 50*time.Millisecond); err != nil || len(evs) != 0 || time.Since(start) < 50*time.Millisecond {
		t.Errorf("other account: %v %v after %v", evs, err, time.Since(start))
	}
	close(release)
	wg.Wait()
}

// TestEventRetention: events older than the retention are hidden from Get
// and List, and Prune deletes before the same cut.
func TestEventRetention(t *testing.T) {
	t.Parallel()
	old := &domain.Event{ID: "evt_old", CreatedAt: t0.Add(-30*24*time.Hour - time.Second)}
	store := &mocks.EventOutboxMock{
		GetEventFunc:           func(context.Context, ports.Scope, string) (*domain.Event, error) { return old, nil },
		ListEventsFunc:         func(context.Context, ports.EventQuery) ([]domain.Event, bool, error) { return nil, false, nil },
		DeleteEventsBeforeFunc: func(context.Context, time.Time, int) (int, error) { return 7, nil },
	}
	s := app.NewEventService(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}, app.EventsConfig{})
	scope := ports.Scope{AccountID: "acct_a", Mode: domain.ModeTest}
	if _, err := s.Get(context.Background(), scope, old.ID); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("Get of an event past retention: %v", err)
	}
	early := t0.Add(-90 * 24 * time.Hour)
	if _, _, err := s.List(context.Background(), ports.EventQuery{Scope: scope, Limit: 5, CreatedAfter: &early}, 0); err != nil {
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
	store := &mocks.EventOutboxMock{ListEventsFunc: func(context.Context, ports.EventQuery) ([]domain.Event, bool, error) { return nil, false, nil }}
	s := app.NewEventService(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}, app.EventsConfig{})
	q := ports.EventQuery{Scope: ports.Scope{AccountID: "acct_a", Mode: domain.ModeTest}, Limit: 10}
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		_, _, _ = s.List(context.Background(), q, 20*time.Second)
		done <- time.Since(start)
	}()
	for len(store.ListEventsCalls()) < 2 { // waiting
		time.Sleep(time.Millisecond)
	}
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
	if _, _, err := s.List(context.Background(), q, 20*time.Second); err != nil || time.Since(start) > time.Second {
		t.Errorf("a long-poll after StopWaiting: %v after %v", err, time.Since(start))
	}
}

// TestCommitSignalWakesLongPolls: with EventsCommitted, a waiting
// long-poll reads again as soon as a commit is signalled, long before its
// safety poll.
func TestCommitSignalWakesLongPolls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	written := false
	store := &mocks.EventOutboxMock{ListEventsFunc: func(context.Context, ports.EventQuery) ([]domain.Event, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if written {
			return []domain.Event{{ID: "evt_new"}}, false, nil
		}
		return nil, false, nil
	}}
	signal := make(chan struct{}, 1)
	s := app.NewEventService(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }},
		app.EventsConfig{EventsCommitted: signal, PollEvery: time.Hour})
	q := ports.EventQuery{Scope: ports.Scope{AccountID: "acct_a", Mode: domain.ModeTest}, Limit: 10}
	type result struct {
		evs  []domain.Event
		took time.Duration
	}
	done := make(chan result, 2)
	for range 2 { // two waiters: one signal wakes both
		go func() {
			start := time.Now()
			evs, _, _ := s.List(context.Background(), q, 20*time.Second)
			done <- result{evs, time.Since(start)}
		}()
	}
	time.Sleep(100 * time.Millisecond) // both are waiting
	mu.Lock()
	written = true
	mu.Unlock()
	signal <- struct{}{}
	for range 2 {
		select {
		case r := <-done:
			if len(r.evs) != 1 || r.took > 5*time.Second {
				t.Errorf("woken with %v after %v", r.evs, r.took)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the commit signal did not wake the long-poll")
		}
	}
	s.StopWaiting()
}
