package app

import (
	"context"
	"sync"
	"time"
)

// wakeAt wakes a delivery loop when a retry falls due (at the end of its
// 100 ms slot, one timer per slot), so idle loops need not poll for it.
func (s *WebhookService) wakeAt(due time.Time) {
	slot := due.Truncate(retryWakeSlot).Add(retryWakeSlot)
	s.retryMu.Lock()
	defer s.retryMu.Unlock()
	if s.retryWakes[slot] {
		return
	}
	s.retryWakes[slot] = true
	time.AfterFunc(max(slot.Sub(s.clock.Now()), 0), func() {
		s.retryMu.Lock()
		delete(s.retryWakes, slot)
		s.retryMu.Unlock()
		s.notify()
	})
}

// Run dispatches and delivers until ctx ends: one dispatcher loop and
// cfg.Workers claim loops sharing cfg.MaxInFlight places. Safe in every
// process at once. When ctx ends, attempts in flight finish (each is
// bounded by domain.AttemptTimeout) before Run returns.
func (s *WebhookService) Run(ctx context.Context) {
	var wg, attempts sync.WaitGroup
	defer attempts.Wait()
	// Signalled, the dispatcher and the first delivery loop poll only
	// every IdlePoll, the other loops rarely: commits, finished attempts
	// and due retries wake them.
	dispatchPoll, firstPoll, siblingPoll := s.cfg.PollInterval, s.cfg.PollInterval, s.cfg.PollInterval
	if s.cfg.EventsCommitted != nil {
		dispatchPoll, firstPoll, siblingPoll = s.cfg.IdlePoll, s.cfg.IdlePoll, 12*s.cfg.IdlePoll
	}
	wg.Go(func() {
		s.loop(ctx, "webhook-dispatch", s.cfg.DispatchBatch, dispatchPoll, s.cfg.DispatchGap, s.cfg.EventsCommitted, false, func(context.Context) (int, error) {
			return s.DispatchOnce(context.WithoutCancel(ctx))
		})
	})
	for i := 0; i < s.cfg.Workers; i++ {
		poll := siblingPoll
		if i == 0 {
			poll = firstPoll
		}
		wg.Go(func() {
			s.loop(ctx, "webhook-deliver", s.cfg.ClaimBatch, poll, 0, s.wake, true, func(context.Context) (int, error) {
				return s.deliverFree(context.WithoutCancel(ctx), &attempts)
			})
		})
	}
	wg.Wait()
}

// loop runs tick until ctx ends; a full batch is followed at once by
// another, otherwise it waits for the poll interval or a wake-up, and a
// woken tick starts at least gap after the one before. A delivery loop
// with a full batch also wakes a sibling.
func (s *WebhookService) loop(ctx context.Context, name string, full int, poll, gap time.Duration, wake <-chan struct{}, wakeSibling bool, tick func(context.Context) (int, error)) {
	t := time.NewTicker(poll)
	defer t.Stop()
	failures := tickFailures{log: s.log, worker: name}
	var started time.Time
	for ctx.Err() == nil {
		started = time.Now()
		n, err := tick(ctx)
		if ctx.Err() == nil {
			failures.note(ctx, err)
		}
		if n >= full {
			if wakeSibling {
				s.notify() // more work is due: wake a sibling too
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
			if rest := gap - time.Since(started); rest > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(rest):
				}
			}
		}
	}
}

// retryWakeSlot groups the wake-ups of retries falling due close together.
const retryWakeSlot = 100 * time.Millisecond
