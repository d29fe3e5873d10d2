package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/quitapix/quita/adapters/webhook"
	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// listenOverlap is how far back each cycle of listen re-reads, to catch an
// event whose transaction committed just after a newer one's (write order
// is not commit order): docs/events.md, "Ordering caveat".
const listenOverlap = 5 * time.Second

// listenCommand follows the events API and forwards every event to a
// local URL, signed as a real delivery is.
func listenCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newDevFlags("quitad listen", getenv)
	forward := fs.String("forward-to", "", "the local URL that receives the events, e.g. http://localhost:3000/hooks (required)")
	events := fs.String("events", "", "comma-separated event types or families (charge.*) to forward; default every event")
	secret := fs.String("secret", "", "the signing secret (64 hex characters); default a new one each run, printed at start")
	from := fs.String("from", "now", "where to start: now (only new events), all (every event kept, 30 days), or an evt_ id (the events after it)")
	wait := fs.Duration("wait", 25*time.Second, "how long each long-poll waits for an event (at most 25s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, key, err := fs.api(getenv)
	if err != nil {
		return err
	}
	mode, err := domain.ParseAPIKey(key)
	if err != nil {
		return errors.New("the API key must be a Quita key, qt_test_... or qt_live_...: listen forwards only events of its mode")
	}
	fu, err := url.Parse(*forward)
	if err != nil || (fu.Scheme != "http" && fu.Scheme != "https") || fu.Host == "" {
		return errors.New("--forward-to must be an absolute http(s) URL such as http://localhost:3000/hooks")
	}
	if *secret == "" {
		if *secret, err = domain.NewWebhookSecret(rand.Reader); err != nil {
			return err
		}
	}
	if *wait < 0 || *wait > 30*time.Second {
		return errors.New("--wait must be between 0s and 25s")
	}
	types, allowed, err := listenTypes(*events)
	if err != nil {
		return err
	}
	l := &listener{api: newAPIClient(base, key, "quitad-listen/1"), forwardTo: fu.String(), secret: *secret, types: types,
		allowed: allowed, live: mode == domain.ModeLive,
		wait: *wait, out: stdout, errs: stderr, seen: map[string]time.Time{},
		// The sender of real deliveries, allowed to reach this machine.
		sender: webhook.NewSender(webhook.Policy{AllowPrivate: true})}
	if err := l.start(ctx, *from); err != nil {
		return err
	}
	what := "every event"
	if len(types) > 0 {
		what = strings.Join(types, ",")
	}
	fmt.Fprintf(stdout, "Ready. Forwarding %s of the %s key's account from %s to %s.\n", what, mode, base, l.forwardTo)
	fmt.Fprintf(stdout, "Webhook signing secret for this run: %s\n", l.secret)
	fmt.Fprintf(stdout, "(verify with domain.VerifyWebhook or the SDK's client.ParseWebhook; Ctrl-C stops)\n")
	err = l.run(ctx)
	if ctx.Err() != nil {
		return nil // interrupted: a normal end
	}
	return err
}

// listenTypes reads --events: the filter sent to the events API, and the
// catalog types it names, which are the only ones listen signs. Without
// --events every type of this quitad's catalog is allowed.
func listenTypes(events string) ([]string, map[domain.EventType]bool, error) {
	allowed := map[domain.EventType]bool{}
	if events == "" {
		for _, d := range domain.EventCatalog {
			allowed[d.Event] = true
		}
		return nil, allowed, nil
	}
	var types []string
	for name := range strings.SplitSeq(events, ",") {
		name = strings.TrimSpace(name)
		matched, ok := domain.EventTypesMatching(name)
		if !ok {
			return nil, nil, fmt.Errorf("--events: %q is neither an event type nor a family such as charge.* (quitad trigger --list shows the catalog)", name)
		}
		for _, t := range matched {
			allowed[t] = true
		}
		types = append(types, name)
	}
	return types, allowed, nil
}

type listener struct {
	api       *client.Client
	sender    *webhook.Sender
	forwardTo string
	secret    string
	// types is the events API's type filter; allowed are the types it
	// names, and live the key's mode: listen signs and forwards only an
	// event of an allowed type and of the key's mode, whatever the API
	// answered.
	types     []string
	allowed   map[domain.EventType]bool
	live      bool
	wait      time.Duration
	out, errs io.Writer

	// cursor is the newest event seen (the long-poll's ending_before).
	cursor string
	// newest is the creation time of the newest event seen; seen holds the
	// ids forwarded (or skipped as history) within the overlap window.
	newest time.Time
	seen   map[string]time.Time
	// backlog is what start found to forward first (--from all).
	backlog []*client.Event
}

func (l *listener) params() client.EventListParams {
	return client.EventListParams{Limit: 100, Types: l.types}
}

// start places the cursor: after the newest event (now), before every
// kept event (all), or after a given event.
func (l *listener) start(ctx context.Context, from string) error {
	switch {
	case from == "now":
		id, err := newestEventID(ctx, l.api)
		if err != nil {
			return err
		}
		l.cursor = id
		// What is already there is history: mark the overlap window seen.
		p, err := l.api.Events.ListPage(ctx, l.params())
		if err != nil {
			return err
		}
		for _, e := range p.Data {
			l.markSeen(e)
		}
		return nil
	case from == "all":
		evs, err := l.collect(ctx, l.params())
		if err != nil {
			return err
		}
		l.backlog = evs
		return nil
	case domain.ParseEventID(from):
		l.cursor = from
		return nil
	}
	return fmt.Errorf("--from %q must be now, all or an evt_ id", from)
}

// collect reads every page of p (newest first) and returns the events
// oldest first.
func (l *listener) collect(ctx context.Context, p client.EventListParams) ([]*client.Event, error) {
	var all []*client.Event
	for {
		page, err := listEvents(ctx, l.api, p, l.note)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if !page.HasMore || len(page.Data) == 0 {
			break
		}
		p.StartingAfter = page.Data[len(page.Data)-1].ID
	}
	slices.Reverse(all)
	return all, nil
}

func (l *listener) note(err error) {
	fmt.Fprintf(l.errs, "%s  events API: %v; retrying\n", time.Now().Format(time.TimeOnly), err)
}

func (l *listener) run(ctx context.Context) error {
	l.forwardAll(ctx, l.backlog)
	if len(l.backlog) > 0 {
		l.cursor = l.backlog[len(l.backlog)-1].ID
	}
	l.backlog = nil
	for ctx.Err() == nil {
		p := l.params()
		p.Wait = l.wait
		var evs []*client.Event
		if l.cursor == "" {
			// The account had no event yet: everything listed is new.
			all, err := l.collect(ctx, p)
			if err != nil {
				return err
			}
			evs = all
		} else {
			p.EndingBefore = l.cursor
			page, err := listEvents(ctx, l.api, p, l.note)
			if err != nil {
				return err
			}
			evs = slices.Clone(page.Data)
			slices.Reverse(evs)
		}
		l.forwardAll(ctx, evs)
		if len(evs) > 0 {
			l.cursor = evs[len(evs)-1].ID
		}
		if err := l.overlap(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// overlap re-reads the last listenOverlap before the newest event seen and
// forwards what is not yet seen (an event that committed late).
func (l *listener) overlap(ctx context.Context) error {
	if l.newest.IsZero() {
		return nil
	}
	p := l.params()
	p.CreatedAfter = l.newest.Add(-listenOverlap)
	evs, err := l.collect(ctx, p)
	if err != nil {
		return err
	}
	l.forwardAll(ctx, evs)
	for id, at := range l.seen {
		if at.Before(l.newest.Add(-2 * listenOverlap)) {
			delete(l.seen, id)
		}
	}
	return nil
}

func (l *listener) markSeen(e *client.Event) {
	l.seen[e.ID] = e.CreatedAt
	if e.CreatedAt.After(l.newest) {
		l.newest = e.CreatedAt
	}
}

// forwardAll forwards the events not seen yet, in the order given (oldest
// first).
func (l *listener) forwardAll(ctx context.Context, evs []*client.Event) {
	for _, e := range evs {
		if ctx.Err() != nil {
			return
		}
		if _, dup := l.seen[e.ID]; dup {
			continue
		}
		l.forward(ctx, e)
		l.markSeen(e)
	}
}

// refusal says why e must not be signed: an id that is not an event id,
// a type outside the allowed ones, or another mode than the key's. It is
// "" for an event listen may forward.
func (l *listener) refusal(e *client.Event) string {
	switch t := domain.EventType(e.Type); {
	case !domain.ParseEventID(e.ID):
		return "its id is not an event id"
	case !domain.KnownEvent(t):
		return fmt.Sprintf("type %q is not in this quitad's event catalog", e.Type)
	case !l.allowed[t]:
		return fmt.Sprintf("type %q is not one of --events", e.Type)
	case e.Livemode != l.live:
		if e.Livemode {
			return "it is a live event and the key is a test key"
		}
		return "it is a test event and the key is a live key"
	}
	return ""
}

func (l *listener) skip(id, why string) {
	fmt.Fprintf(l.errs, "%s  skipped event %q: %s; not signed or forwarded\n", time.Now().Format(time.TimeOnly), id, why)
}

// forward posts one event to the local URL exactly as a delivery is sent:
// same body (the event's payload, byte for byte), headers and signature
// scheme as the webhook workers. An event refused by refusal, as listed
// or as read by id, is skipped with a warning.
func (l *listener) forward(ctx context.Context, e *client.Event) {
	if why := l.refusal(e); why != "" {
		l.skip(e.ID, why)
		return
	}
	// The list masks documents (docs/decisions.md); the event read by id
	// is the envelope exactly as delivered.
	if exact, err := l.api.Events.Get(ctx, e.ID); err == nil {
		if exact.ID != e.ID {
			l.skip(e.ID, fmt.Sprintf("reading it by id answered event %q", exact.ID))
			return
		}
		if why := l.refusal(exact); why != "" {
			l.skip(e.ID, why+" (as read by id)")
			return
		}
		e = exact
	} else if ctx.Err() == nil {
		fmt.Fprintf(l.errs, "%s  events API: %v; forwarding %s as listed (documents masked)\n", time.Now().Format(time.TimeOnly), err, e.ID)
	}
	t := domain.EventType(e.Type)
	req := ports.WebhookRequest{
		URL: l.forwardTo, Body: e.Raw, EventType: t,
		Signature:  domain.SignWebhook(t, l.secret, time.Now(), e.Raw),
		DeliveryID: domain.PrefixDelivery + strings.TrimPrefix(e.ID, domain.PrefixEvent) + "-1",
	}
	res, err := l.sender.Send(ctx, req)
	answer := fmt.Sprintf("%d", res.StatusCode)
	switch {
	case err != nil:
		answer = "not sent: " + err.Error()
	case res.StatusCode == 0:
		answer = "failed: " + res.Error
	}
	fmt.Fprintf(l.out, "%s  %-24s %s  -> %s (%d ms)\n", time.Now().Format(time.TimeOnly), e.Type, e.ID, answer, res.Elapsed.Milliseconds())
}
