package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// EventsController serves /v1/events: the events of the key's account and
// mode, each with the envelope exactly as it was (or will be) delivered.
type EventsController struct {
	events *app.EventService
}

// Routes registers the event routes.
func (c *EventsController) Routes(r *mux.Router) {
	r.HandleFunc("/events", handle(c.list)).Methods(http.MethodGet).Name("events.list")
	r.HandleFunc("/events/{id}", handle(c.get)).Methods(http.MethodGet).Name("events.get")
}

type eventListResponse struct {
	Object     string               `json:"object"`
	Data       []domain.PublicEvent `json:"data"`
	HasMore    bool                 `json:"has_more"`
	NextCursor *string              `json:"next_cursor"`
}

func (c *EventsController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	q, wait, err := parseEventQuery(r, callerFrom(r.Context()).Scope())
	if err != nil {
		return nil, err
	}
	page, err := c.events.List(r.Context(), q, wait)
	if err != nil {
		if isNotFound(err) {
			param := "starting_after"
			if q.EndingBefore != "" {
				param = "ending_before"
			}
			err = badRequest(param, "parameter_invalid", param+" is not an event of this account and mode")
		}
		return nil, err
	}
	out := eventListResponse{Object: "list", Data: make([]domain.PublicEvent, 0, len(page.Events)), HasMore: page.More}
	for _, e := range page.Events {
		out.Data = append(out.Data, e.Public().Masked())
	}
	if page.More && page.Next != "" {
		// The cursor that continues in the direction asked; after a
		// filtered page that examined its most rows it may name an event
		// the page does not show.
		out.NextCursor = &page.Next
	}
	return out, nil
}

func (c *EventsController) get(_ http.ResponseWriter, r *http.Request) (any, error) {
	id := mux.Vars(r)["id"]
	if !domain.ParseEventID(id) {
		return nil, ports.ErrNotFound
	}
	ev, err := c.events.Get(r.Context(), callerFrom(r.Context()).Scope(), id)
	if err != nil {
		return nil, err
	}
	return ev.Public(), nil
}

// parseEventQuery reads limit, starting_after or ending_before, type (one
// or more comma-separated catalog types or family wildcards such as
// charge.*), created_after/created_before (as the charge list) and wait
// (seconds, "25" or "25s", 0–25).
func parseEventQuery(r *http.Request, scope ports.Scope) (ports.EventQuery, time.Duration, error) {
	v := r.URL.Query()
	q := ports.EventQuery{Scope: scope}
	p, err := parseListParams(v, "an event id (evt_...)", domain.ParseEventID)
	if err != nil {
		return q, 0, err
	}
	q.Limit, q.StartingAfter, q.CreatedAfter, q.CreatedBefore = p.Limit, p.StartingAfter, p.CreatedAfter, p.CreatedBefore
	if s := v.Get("ending_before"); s != "" {
		if q.StartingAfter != "" {
			return q, 0, badRequest("ending_before", "parameter_invalid", "send starting_after or ending_before, not both")
		}
		if !domain.ParseEventID(s) {
			return q, 0, badRequest("ending_before", "parameter_invalid", "ending_before must be an event id (evt_...)")
		}
		q.EndingBefore = s
	}
	if s := v.Get("type"); s != "" {
		// Each entry names at least one catalog type, so a list longer
		// than the catalog names some type twice: refused before anything
		// is expanded. The expansion keeps each type once, so the query
		// (run again on every long-poll tick) names at most the catalog.
		names := strings.Split(s, ",")
		if len(names) > len(domain.EventCatalog) {
			return q, 0, badRequest("type", "parameter_invalid",
				"type may list at most "+strconv.Itoa(len(domain.EventCatalog))+" event types or families")
		}
		seen := make(map[domain.EventType]bool, len(domain.EventCatalog))
		for _, name := range names {
			types, ok := domain.EventTypesMatching(strings.TrimSpace(name))
			if !ok {
				return q, 0, badRequest("type", "parameter_invalid", "type must list event types of the catalog (GET /v1/webhooks/event-catalog) or families such as charge.*, separated by commas")
			}
			for _, t := range types {
				if !seen[t] {
					seen[t] = true
					q.Types = append(q.Types, t)
				}
			}
		}
	}
	wait, err := eventWait(v.Get("wait"))
	return q, wait, err
}

// eventWait reads the wait parameter of the event list: whole seconds
// from 0 to app.MaxEventWait, "25" or "25s"; absent is 0. The admission
// limiter reads it the same way to tell a long-poll (unlimited).
func eventWait(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, "s"))
	if err != nil || n < 0 || time.Duration(n)*time.Second > app.MaxEventWait {
		return 0, badRequest("wait", "parameter_invalid", "wait must be a number of seconds from 0 to 25, such as 25 or 25s")
	}
	return time.Duration(n) * time.Second, nil
}
