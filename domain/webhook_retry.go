package domain

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DeliveryStatus is a delivery's status. Values are API.
type DeliveryStatus string

// Delivery statuses.
const (
	DeliveryPending    DeliveryStatus = "PENDING"
	DeliveryProcessing DeliveryStatus = "PROCESSING"
	DeliveryDelivered  DeliveryStatus = "DELIVERED"
	DeliveryFailed     DeliveryStatus = "FAILED"
	DeliveryCancelled  DeliveryStatus = "CANCELLED"
)

// DeliveryStatuses lists every delivery status.
var DeliveryStatuses = []DeliveryStatus{DeliveryPending, DeliveryProcessing, DeliveryDelivered, DeliveryFailed, DeliveryCancelled}

// deliveryTransitions is the one table of delivery status changes.
// PROCESSING → PROCESSING is a new lease after the previous holder's
// expired (the worker died mid-attempt).
var deliveryTransitions = map[DeliveryStatus][]DeliveryStatus{
	DeliveryPending:    {DeliveryProcessing, DeliveryCancelled},
	DeliveryProcessing: {DeliveryProcessing, DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryCancelled},
	DeliveryDelivered:  nil,
	DeliveryFailed:     nil,
	DeliveryCancelled:  nil,
}

// Valid reports whether s is a delivery status.
func (s DeliveryStatus) Valid() bool {
	_, ok := deliveryTransitions[s]
	return ok
}

// Final reports whether no further attempt will be made.
func (s DeliveryStatus) Final() bool {
	return s == DeliveryDelivered || s == DeliveryFailed || s == DeliveryCancelled
}

// CanTransition reports whether a delivery may go from s to to.
func (s DeliveryStatus) CanTransition(to DeliveryStatus) bool {
	for _, x := range deliveryTransitions[s] {
		if x == to {
			return true
		}
	}
	return false
}

// MaxDeliveryAttempts is the number of attempts before a delivery FAILs.
const MaxDeliveryAttempts = 15

// AttemptTimeout is how long a receiver has to answer 2xx.
const AttemptTimeout = 10 * time.Second

// MaxRetryAfter caps a receiver's Retry-After.
const MaxRetryAfter = 24 * time.Hour

// RetrySchedule is the wait after attempt n (index n-1) before attempt n+1;
// attempt 1 is made at once. 14 waits, 15 attempts, about 3.4 days.
var RetrySchedule = []time.Duration{
	5 * time.Second, 30 * time.Second, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 6 * time.Hour,
	8 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour,
}

// RetryDelay is the wait after attempt (1-based) under schedule, with ±10 %
// jitter: u is a uniform draw in [0, 1) from the caller's random source.
// Past the schedule's end the last wait repeats.
func RetryDelay(schedule []time.Duration, attempt int, u float64) time.Duration {
	if len(schedule) == 0 {
		return 0
	}
	i := min(max(attempt-1, 0), len(schedule)-1)
	base := schedule[i]
	u = min(max(u, 0), 1)
	// base × (0.9 + 0.2u), in integer nanoseconds.
	jitter := time.Duration(float64(base/10) * (2*u - 1))
	return base + jitter
}

// AttemptResult is what one delivery attempt got back.
type AttemptResult struct {
	// StatusCode is the receiver's HTTP status, 0 when there was none.
	StatusCode int
	// Error is a short transport error ("timeout", "connection refused").
	Error string
	// RetryAfter is the receiver's Retry-After on 429 or 503, 0 otherwise.
	RetryAfter time.Duration
	// Elapsed is the time from sending to the full response.
	Elapsed time.Duration
	// Permanent marks a failure no retry can fix (address refused by the
	// SSRF guard).
	Permanent bool
}

// Succeeded reports the success rule: 2xx within AttemptTimeout.
func (r AttemptResult) Succeeded() bool {
	return r.StatusCode >= 200 && r.StatusCode < 300 && r.Elapsed <= AttemptTimeout
}

// Gone reports a 410: the receiver asks never to be called again.
func (r AttemptResult) Gone() bool { return r.StatusCode == 410 }

// WebhookDelivery is one event on its way to one receiver.
type WebhookDelivery struct {
	ID        string
	AccountID string
	Mode      Mode
	// EndpointID is empty for a per-transaction webhookUrl delivery.
	EndpointID string
	// URL is the per-transaction receiver (empty for endpoints, whose
	// current URL is read at attempt time).
	URL            string
	EventID        string
	EventType      EventType
	ChargeID       string
	Payload        []byte
	Status         DeliveryStatus
	Attempts       int
	MaxAttempts    int
	LastStatusCode *int
	LastError      *string
	// NextRetryAt is when the next attempt is due while PENDING.
	NextRetryAt *time.Time
	DeliveredAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewWebhookDelivery is a delivery due at once.
func NewWebhookDelivery(id string, ev Event, endpointID, url string, now time.Time) WebhookDelivery {
	due := now.UTC()
	return WebhookDelivery{
		ID: id, AccountID: ev.AccountID, Mode: ev.Mode, EndpointID: endpointID, URL: url,
		EventID: ev.ID, EventType: ev.Type, ChargeID: ev.ChargeID, Payload: ev.Payload,
		Status: DeliveryPending, MaxAttempts: MaxDeliveryAttempts, NextRetryAt: &due,
		CreatedAt: now.UTC(), UpdatedAt: now.UTC(),
	}
}

// ErrDeliveryNotInFlight is returned when an attempt's result is recorded
// on a delivery that is not PROCESSING.
var ErrDeliveryNotInFlight = errors.New("delivery is not being attempted")

// MaxLastErrorLen bounds lastError.
const MaxLastErrorLen = 200

// RecordAttempt applies the result of the attempt in flight (Attempts
// already counts it): DELIVERED on success; CANCELLED on 410 (the caller
// also deactivates the endpoint); FAILED on a permanent failure or after
// the last attempt; otherwise PENDING again, due after the schedule's
// wait (or the receiver's Retry-After on 429/503 when that is longer). u is
// the jitter draw in [0, 1).
func (d *WebhookDelivery) RecordAttempt(r AttemptResult, schedule []time.Duration, now time.Time, u float64) error {
	if d.Status != DeliveryProcessing {
		return ErrDeliveryNotInFlight
	}
	now = now.UTC()
	d.UpdatedAt = now
	d.NextRetryAt = nil
	if r.StatusCode != 0 {
		c := r.StatusCode
		d.LastStatusCode = &c
	} else {
		d.LastStatusCode = nil
	}
	d.LastError = nil
	switch {
	case r.Succeeded():
		d.Status = DeliveryDelivered
		d.DeliveredAt = &now
		return nil
	case r.StatusCode >= 200 && r.StatusCode < 300:
		d.setError(fmt.Sprintf("answered %d after %s, over the %s limit", r.StatusCode, r.Elapsed.Round(time.Millisecond), AttemptTimeout))
	case r.StatusCode != 0:
		d.setError(fmt.Sprintf("receiver answered HTTP %d", r.StatusCode))
	default:
		d.setError(r.Error)
	}
	switch {
	case r.Gone():
		d.Status = DeliveryCancelled
		d.setError("receiver answered 410 Gone; endpoint deactivated")
	case r.Permanent || d.Attempts >= d.MaxAttempts:
		d.Status = DeliveryFailed
	default:
		wait := RetryDelay(schedule, d.Attempts, u)
		if (r.StatusCode == 429 || r.StatusCode == 503) && r.RetryAfter > wait {
			wait = min(r.RetryAfter, MaxRetryAfter)
		}
		next := now.Add(wait)
		d.Status, d.NextRetryAt = DeliveryPending, &next
	}
	return nil
}

// Abandon records that the attempt in flight can no longer be made (its
// worker died after the last attempt): FAILED.
func (d *WebhookDelivery) Abandon(reason string, now time.Time) error {
	if d.Status != DeliveryProcessing {
		return ErrDeliveryNotInFlight
	}
	d.Status, d.NextRetryAt, d.UpdatedAt = DeliveryFailed, nil, now.UTC()
	d.setError(reason)
	return nil
}

func (d *WebhookDelivery) setError(msg string) {
	msg = strings.ToValidUTF8(msg, "")
	if len(msg) > MaxLastErrorLen {
		msg = msg[:MaxLastErrorLen]
		msg = strings.ToValidUTF8(msg, "")
	}
	if msg == "" {
		msg = "delivery failed"
	}
	d.LastError = &msg
}
