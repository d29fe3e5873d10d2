package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EventsService is /v1/events: every event of the key's account and mode
// for 30 days, each with the envelope exactly as it was (or will be)
// delivered, so a merchant whose endpoint was down can catch up by
// polling. The events are the same *Event a webhook handler gets from
// ParseWebhook, so one function can handle both.
type EventsService struct{ c *Client }

// EventListParams filter and page the event list.
type EventListParams struct {
	// Limit is the page size, 1–100 (default 25).
	Limit int
	// StartingAfter is the cursor of older pages: an event id.
	StartingAfter string
	// EndingBefore asks for the events written just after this one
	// (still newest first); NextCursor then continues towards newer ones.
	EndingBefore string
	// Types are catalog types or families such as "charge.*".
	Types []string
	// CreatedAfter and CreatedBefore bound created_at, inclusive.
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// Wait long-polls: when the page would be empty the server waits up
	// to this long (at most 25 s) for a matching event.
	Wait time.Duration
}

func (p EventListParams) query() url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.StartingAfter != "" {
		q.Set("starting_after", p.StartingAfter)
	}
	if p.EndingBefore != "" {
		q.Set("ending_before", p.EndingBefore)
	}
	if len(p.Types) > 0 {
		q.Set("type", strings.Join(p.Types, ","))
	}
	if !p.CreatedAfter.IsZero() {
		q.Set("created_after", p.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !p.CreatedBefore.IsZero() {
		q.Set("created_before", p.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	if p.Wait > 0 {
		q.Set("wait", strconv.Itoa(int(p.Wait.Round(time.Second)/time.Second)))
	}
	return q
}

// EventList is one page of events, newest first.
type EventList struct {
	Data    []*Event
	HasMore bool
	// NextCursor continues in the direction asked (nil on the last page).
	NextCursor *string
}

// eventItem is an event as the events API shows it: the delivered
// envelope's members (APIVersion, Event, Data, and the canonical id,
// object, type and created_at) with the API's own. event() reads the
// envelope from Payload, which holds every one of them.
type eventItem struct {
	ID         string          `json:"id"`
	Object     string          `json:"object"`
	APIVersion string          `json:"api_version"`
	Event      string          `json:"event"`
	Type       string          `json:"type"`
	Legacy     bool            `json:"legacy"`
	Livemode   bool            `json:"livemode"`
	CreatedAt  time.Time       `json:"created_at"`
	Data       json.RawMessage `json:"data"`
	Payload    json.RawMessage `json:"payload"`
}

// event decodes the item's payload into the webhook Event, with the
// item's id (the one to dedupe on, also for legacy envelopes).
func (it *eventItem) event() (*Event, error) {
	ev, err := ParseEvent(it.Payload)
	if err != nil {
		return nil, fmt.Errorf("quita: event %s: %w", it.ID, err)
	}
	ev.ID, ev.Livemode = it.ID, it.Livemode
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = it.CreatedAt
	}
	return ev, nil
}

// ListPage reads one page of events.
func (s *EventsService) ListPage(ctx context.Context, p EventListParams) (*EventList, error) {
	var out struct {
		Object     string       `json:"object"`
		Data       []*eventItem `json:"data"`
		HasMore    bool         `json:"has_more"`
		NextCursor *string      `json:"next_cursor"`
	}
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/events", query: p.query()}, &out); err != nil {
		return nil, err
	}
	list := &EventList{Data: make([]*Event, 0, len(out.Data)), HasMore: out.HasMore, NextCursor: out.NextCursor}
	for _, it := range out.Data {
		ev, err := it.event()
		if err != nil {
			return nil, err
		}
		list.Data = append(list.Data, ev)
	}
	return list, nil
}

// List iterates over every event matching p, newest first, following the
// cursor towards older events.
func (s *EventsService) List(ctx context.Context, p EventListParams) iter.Seq2[*Event, error] {
	return paginate(p, func(p EventListParams) ([]*Event, EventListParams, bool, error) {
		page, err := s.ListPage(ctx, p)
		if err != nil {
			return nil, p, false, err
		}
		if page.NextCursor != nil {
			p.StartingAfter = *page.NextCursor
		}
		return page.Data, p, page.HasMore && page.NextCursor != nil, nil
	})
}

// Get reads one event by id.
func (s *EventsService) Get(ctx context.Context, id string) (*Event, error) {
	var it eventItem
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/events/" + pathID(id)}, &it); err != nil {
		return nil, err
	}
	return it.event()
}

// followOverlap is how far back each round of Follow reads again: an event
// whose transaction committed late can appear just behind the newest one
// seen.
const followOverlap = 5 * time.Second

// Follow yields the events written from now on (of types, or all), oldest
// first, for as long as ctx lives: it long-polls, re-reads a short overlap
// so an event committed late is not missed, and yields each event once.
// It ends at the first error that survives the client's retries (yielded)
// or when ctx ends (not yielded). since, when not zero, starts from the
// events created at or after it instead (catch-up, within the 30 days
// kept).
func (s *EventsService) Follow(ctx context.Context, since time.Time, types ...string) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		f := follower{s: s, types: types, seen: map[string]time.Time{}, from: since}
		if since.IsZero() {
			// Start at the newest event: only what is written after it.
			page, err := s.ListPage(ctx, EventListParams{Limit: 1, Types: types})
			if err != nil {
				yield(nil, err)
				return
			}
			if len(page.Data) > 0 {
				f.markSeen(page.Data[0])
				f.head = page.Data[0].ID
			}
		}
		for ctx.Err() == nil {
			batch, err := f.round(ctx)
			if err != nil {
				if ctx.Err() == nil {
					yield(nil, err)
				}
				return
			}
			for _, ev := range batch {
				if !yield(ev, nil) {
					return
				}
			}
			if len(batch) == 0 {
				if err := f.wait(ctx); err != nil {
					if ctx.Err() == nil {
						yield(nil, err)
					}
					return
				}
			}
		}
	}
}

type follower struct {
	s     *EventsService
	types []string
	// seen are the ids yielded, with their created_at, kept for the
	// overlap; from is where the next round starts reading.
	seen map[string]time.Time
	from time.Time
	// head is the newest event (by write order) read so far.
	head string
}

func (f *follower) markSeen(ev *Event) {
	f.seen[ev.ID] = ev.CreatedAt
	if ev.CreatedAt.After(f.from) {
		f.from = ev.CreatedAt
	}
}

// round reads every event from f.from minus the overlap and returns the
// unseen ones, oldest first.
func (f *follower) round(ctx context.Context) ([]*Event, error) {
	p := EventListParams{Limit: 100, Types: f.types}
	if !f.from.IsZero() {
		p.CreatedAfter = f.from.Add(-followOverlap)
	}
	var batch []*Event
	first := true
	for ev, err := range f.s.List(ctx, p) {
		if err != nil {
			return nil, err
		}
		if first {
			f.head, first = ev.ID, false
		}
		if _, ok := f.seen[ev.ID]; !ok {
			batch = append(batch, ev)
		}
	}
	slices.Reverse(batch)
	for _, ev := range batch {
		f.markSeen(ev)
	}
	for id, at := range f.seen {
		if at.Before(f.from.Add(-2 * followOverlap)) {
			delete(f.seen, id)
		}
	}
	return batch, nil
}

// wait long-polls until an event newer than the head is written (or 25 s
// pass).
func (f *follower) wait(ctx context.Context) error {
	p := EventListParams{Limit: 1, Types: f.types, EndingBefore: f.head, Wait: 25 * time.Second}
	if !f.from.IsZero() {
		p.CreatedAfter = f.from.Add(-followOverlap)
	}
	_, err := f.s.ListPage(ctx, p)
	return err
}
