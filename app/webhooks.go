package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// WebhooksConfig tunes webhook delivery. The zero value is production.
type WebhooksConfig struct {
	// RetrySchedule replaces domain.RetrySchedule (tests shrink it so they
	// never sleep through real back-off).
	RetrySchedule []time.Duration
	// Lease is how long a claimed delivery belongs to its worker before
	// another may take it (default 30 s: longer than an attempt's 10 s).
	Lease time.Duration
	// ClaimBatch is how many deliveries one claim leases at most (default
	// 64); they are attempted concurrently.
	ClaimBatch int
	// MaxInFlight bounds the attempts running at once in this process
	// (default Workers × ClaimBatch). Run claims only as many deliveries as
	// there are free places and starts each at once, never waiting for a
	// batch's slowest receiver.
	MaxInFlight int
	// PerEndpoint bounds one endpoint's deliveries in flight across every
	// process (default 32: a receiver answering in 50 ms still gets 640
	// deliveries/s), and PerAccount an account's (default MaxInFlight/4),
	// so slow receivers hold a bounded share of the places and cannot block
	// other endpoints or accounts.
	PerEndpoint int
	PerAccount  int
	// Workers is the number of claim loops per process (default 4).
	Workers int
	// DispatchBatch is how many outbox events one fan-out handles
	// (default 500).
	DispatchBatch int
	// DispatchGap is the shortest time between the starts of two dispatch
	// passes that are woken rather than following a full batch (default
	// 50 ms): under load one pass fans out the events of many commits in
	// one transaction instead of one pass — six statements and a commit —
	// per create. It is the most a commit's events wait for
	// the dispatcher beyond the pass itself.
	DispatchGap time.Duration
	// PollInterval is how often idle loops look for work (default 100 ms).
	// A dispatch in the same process wakes the workers at once.
	// With EventsCommitted set, the dispatcher and one delivery loop poll
	// every IdlePoll and the others every 12 IdlePolls: they are woken.
	PollInterval time.Duration
	// EventsCommitted, when set, receives when outbox events are committed
	// by this or another process: the dispatcher runs at once. A retry this
	// process schedules wakes a delivery loop when it falls due; retries
	// and expired leases of other processes wait for the safety poll.
	EventsCommitted <-chan struct{}
	// IdlePoll is the safety poll of loops that are woken by signals
	// (default 10 s).
	IdlePoll time.Duration
	// Jitter draws uniformly from [0, 1) for the retry jitter (default
	// math/rand/v2).
	Jitter func() float64
	// URLChecks bounds the URL checks of endpoint registrations and
	// updates (urlChecks: outside the admission place, 8 at once per
	// account by default).
	URLChecks URLCheckLimit
}

// WebhookService manages endpoints and delivers events.
type WebhookService struct {
	store  ports.WebhookStore
	outbox ports.WebhookOutbox
	sender ports.WebhookSender
	guard  ports.URLGuard
	clock  ports.Clock
	ids    ports.IDGenerator
	log    *slog.Logger
	cfg    WebhooksConfig
	wake   chan struct{}
	// slots holds one token per attempt Run has in flight.
	slots chan struct{}
	// retryWakes are the 100 ms slots at whose end a retry this process
	// scheduled falls due and a timer will wake a delivery loop.
	retryMu    sync.Mutex
	retryWakes map[time.Time]bool
	// urlChecks runs guard for endpoint registrations and updates.
	urlChecks *urlChecks
}

// NewWebhookService wires the webhook service.
func NewWebhookService(store ports.WebhookStore, outbox ports.WebhookOutbox, sender ports.WebhookSender, guard ports.URLGuard,
	clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg WebhooksConfig,
) *WebhookService {
	if cfg.RetrySchedule == nil {
		cfg.RetrySchedule = domain.RetrySchedule
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.ClaimBatch <= 0 {
		cfg.ClaimBatch = 64
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = cfg.Workers * cfg.ClaimBatch
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = 32
	}
	if cfg.PerAccount <= 0 {
		cfg.PerAccount = max(cfg.MaxInFlight/4, 1)
	}
	if cfg.DispatchBatch <= 0 {
		cfg.DispatchBatch = 500
	}
	if cfg.DispatchGap <= 0 {
		cfg.DispatchGap = 50 * time.Millisecond
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 100 * time.Millisecond
	}
	if cfg.IdlePoll <= 0 {
		cfg.IdlePoll = 10 * time.Second
	}
	if cfg.Jitter == nil {
		cfg.Jitter = mrand.Float64
	}
	if log == nil {
		log = slog.Default()
	}
	return &WebhookService{
		store: store, outbox: outbox, sender: sender, guard: guard,
		clock: clock, ids: ids, log: log, cfg: cfg, wake: make(chan struct{}, 1),
		slots: make(chan struct{}, cfg.MaxInFlight), retryWakes: map[time.Time]bool{},
		urlChecks: newURLChecks(guard, cfg.URLChecks),
	}
}

// ErrURLNotAllowed: the endpoint URL points at a refused address.
var ErrURLNotAllowed = ports.ErrURLForbidden

// ListDeliveries returns a page of the caller's deliveries and the total.
func (s *WebhookService) ListDeliveries(ctx context.Context, q ports.DeliveryQuery) ([]domain.WebhookDelivery, int, error) {
	return s.store.ListDeliveries(ctx, q)
}

// DeliveryStats counts the caller's deliveries per status.
func (s *WebhookService) DeliveryStats(ctx context.Context, caller Caller) (ports.DeliveryStats, error) {
	return s.store.DeliveryStats(ctx, caller.Scope())
}

func (s *WebhookService) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// DispatchOnce fans one batch of outbox events out to deliveries: one per
// subscribed ACTIVE endpoint of the event's account and mode, plus one to
// the charge's webhookUrl for legacy events. It returns the number of
// events handled.
func (s *WebhookService) DispatchOnce(ctx context.Context) (int, error) {
	now := s.clock.Now()
	made := 0
	n, err := s.outbox.DispatchEvents(ctx, s.cfg.DispatchBatch, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
		var out []domain.WebhookDelivery
		add := func(ev domain.Event, endpointID, url string) error {
			raw, err := s.ids.NewID()
			if err != nil {
				return err
			}
			out = append(out, domain.NewWebhookDelivery(domain.PrefixDelivery+raw, ev, endpointID, url, now))
			return nil
		}
		for _, ev := range b.Events {
			for _, ep := range b.Endpoints[ports.Scope{AccountID: ev.AccountID, Mode: ev.Mode}] {
				if ep.Subscribes(ev.Type) {
					if err := add(ev.Event, ep.ID, ""); err != nil {
						return nil, err
					}
				}
			}
			if ev.WebhookURL != "" && ev.Type.Legacy() {
				if err := add(ev.Event, "", ev.WebhookURL); err != nil {
					return nil, err
				}
			}
		}
		made += len(out)
		return out, nil
	})
	if err == nil && made > 0 {
		s.notify() // only deliveries give the delivery loops work
	}
	return n, err
}

// DeliverOnce claims one batch of due deliveries and attempts them
// concurrently, returning how many it claimed. When ctx ends mid-attempt
// the results are not recorded — exactly like a worker that died — and the
// deliveries are attempted again once their lease expires.
func (s *WebhookService) DeliverOnce(ctx context.Context) (int, error) {
	now := s.clock.Now()
	claims, err := s.store.ClaimDeliveries(ctx, now, now.Add(s.cfg.Lease), s.cfg.ClaimBatch, s.caps())
	if err != nil || len(claims) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, c := range claims {
		wg.Go(func() { s.attempt(ctx, c) })
	}
	wg.Wait()
	return len(claims), nil
}

func (s *WebhookService) caps() ports.ClaimCaps {
	return ports.ClaimCaps{PerEndpoint: s.cfg.PerEndpoint, PerAccount: s.cfg.PerAccount}
}

// deliverFree is Run's delivery step: it claims at most as many due
// deliveries as there are free places and starts each attempt without
// waiting for the others, so one slow receiver never holds up the next
// claim (security.md, item 7). A finished attempt frees its place and wakes
// the loops.
func (s *WebhookService) deliverFree(ctx context.Context, attempts *sync.WaitGroup) (int, error) {
	free := min(cap(s.slots)-len(s.slots), s.cfg.ClaimBatch)
	if free <= 0 {
		return 0, nil
	}
	now := s.clock.Now()
	claims, err := s.store.ClaimDeliveries(ctx, now, now.Add(s.cfg.Lease), free, s.caps())
	for _, c := range claims {
		s.slots <- struct{}{} // free only by another loop's claim: then a short wait
		attempts.Go(func() {
			defer func() { <-s.slots; s.notify() }()
			s.attempt(ctx, c)
		})
	}
	return len(claims), err
}

func (s *WebhookService) attempt(ctx context.Context, c ports.DeliveryClaim) {
	d := c.Delivery
	if d.Attempts > d.MaxAttempts {
		// The lease of the last attempt expired: its outcome is unknown.
		d.Attempts = d.MaxAttempts
		_ = d.Abandon("the last attempt was interrupted", s.clock.Now())
		s.complete(ctx, d, c.LeaseToken, false)
		return
	}
	var res domain.AttemptResult
	switch {
	case c.URL == "":
		res = domain.AttemptResult{Error: "receiver has no url", Permanent: true}
	case c.Secret == "":
		res = domain.AttemptResult{Error: "no signing secret: rotate the transaction webhook secret"}
	default:
		var err error
		if res, err = s.send(ctx, c); err != nil {
			// ctx ended: this worker is going away. The lease runs out and
			// another worker makes the attempt again.
			return
		}
	}
	if err := d.RecordAttempt(res, s.cfg.RetrySchedule, s.clock.Now(), s.cfg.Jitter()); err != nil {
		s.log.ErrorContext(ctx, "webhook: record attempt", "delivery", d.ID, "err", err)
		return
	}
	s.complete(ctx, d, c.LeaseToken, res.Gone())
}

// send makes the attempt of a claim that has a URL and a secret. A
// per-transaction webhookUrl (no endpoint) was not checked when registered
// as endpoints are, so the URL guard runs first. The error is ctx's when it
// ended: the attempt's outcome is unknown.
func (s *WebhookService) send(ctx context.Context, c ports.DeliveryClaim) (domain.AttemptResult, error) {
	d := c.Delivery
	if d.EndpointID == "" {
		if err := s.guard.CheckURL(ctx, d.Mode, c.URL); err != nil {
			if ctx.Err() != nil {
				return domain.AttemptResult{}, ctx.Err()
			}
			return urlCheckResult(err), nil
		}
	}
	sig := domain.SignWebhook(d.EventType, c.Secret, s.clock.Now(), d.Payload)
	return s.sender.Send(ctx, ports.WebhookRequest{
		URL: c.URL, Body: d.Payload, Signature: sig, EventType: d.EventType,
		DeliveryID: fmt.Sprintf("%s-%d", d.ID, d.Attempts),
	})
}

// urlCheckResult is the attempt a refused URL check makes. Only a real
// refusal is permanent: the name resolves to a refused address
// (ErrURLForbidden), or the scheme or URL is bad. A host that does not
// resolve (SERVFAIL, a timeout, a restarting resolver, a name not there
// yet) fails this attempt only and is retried on the schedule, as the
// sender's own "dns lookup failed" is; the dialer still refuses a refused
// address at connect time.
func urlCheckResult(err error) domain.AttemptResult {
	switch {
	case errors.Is(err, ports.ErrURLUnresolved):
		return domain.AttemptResult{Error: "dns lookup failed"}
	case errors.Is(err, ports.ErrURLForbidden), errors.Is(err, domain.ErrValidation):
		return domain.AttemptResult{Error: "webhookUrl not allowed (scheme or address)", Permanent: true}
	default:
		return domain.AttemptResult{Error: "webhookUrl check failed"}
	}
}

func (s *WebhookService) complete(ctx context.Context, d domain.WebhookDelivery, token string, gone bool) {
	if ctx.Err() != nil {
		return
	}
	err := s.saveOutcome(ctx, d, token, gone)
	switch {
	case errors.Is(err, ports.ErrLeaseLost):
		s.log.WarnContext(ctx, "webhook: lease lost; attempt result dropped", "delivery", d.ID)
	case err != nil:
		s.log.ErrorContext(ctx, "webhook: save attempt", "delivery", d.ID, "err", err)
	case gone:
		s.log.InfoContext(ctx, "webhook: endpoint answered 410; deactivated", "endpoint", d.EndpointID)
	case d.Status == domain.DeliveryPending && d.NextRetryAt != nil:
		s.wakeAt(*d.NextRetryAt)
	}
}

// saveOutcome records an attempt's outcome under its lease token. While
// the database is unavailable it tries again (waits doubling from
// saveRetryFirst to saveRetryMax) rather than leave the delivery
// PROCESSING until its lease ends, holding its endpoint's place in the
// per-endpoint cap all that time and to be sent once more. It gives up
// after a lease's length; the store refuses the token sooner (ErrLeaseLost)
// once the claim's lease has run out.
func (s *WebhookService) saveOutcome(ctx context.Context, d domain.WebhookDelivery, token string, gone bool) error {
	err := s.store.CompleteDelivery(ctx, d, token, gone)
	deadline := time.Now().Add(s.cfg.Lease)
	for wait := saveRetryFirst; errors.Is(err, ports.ErrStoreUnavailable) && time.Now().Add(wait).Before(deadline); wait = min(2*wait, saveRetryMax) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		err = s.store.CompleteDelivery(ctx, d, token, gone)
	}
	return err
}

// The waits between saves of an attempt's outcome while the database is
// unavailable: doubling from saveRetryFirst up to saveRetryMax.
const (
	saveRetryFirst = 100 * time.Millisecond
	saveRetryMax   = 2 * time.Second
)
