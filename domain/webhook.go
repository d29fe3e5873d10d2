package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Webhook signatures.
//
// Canonical events (charge.*, payout.*) carry
//
//	X-Quita-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// and legacy events (payment.*, withdrawal.*) carry
//
//	X-Quita-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>
//
// The HMAC key is the secret string as shown to the merchant (64 hex
// characters), used as bytes, not hex-decoded.

// SignatureHeader is the header that carries a delivery's signature.
const SignatureHeader = "X-Quita-Signature"

// Other headers of every delivery.
const (
	DeliveryIDHeader = "X-Quita-Delivery-Id"
	EventTypeHeader  = "X-Quita-Event-Type"
)

// SignatureTolerance is how far a canonical signature's timestamp may be
// from the verifier's clock, either way.
const SignatureTolerance = 300 * time.Second

// WebhookSecretLen is the length of a webhook secret: 32 random bytes in
// lower-case hex.
const WebhookSecretLen = 64

var (
	// ErrSignatureMissing: the signature header is empty.
	ErrSignatureMissing = errors.New("webhook signature header is missing")
	// ErrSignatureMalformed: the header is neither "t=..,v1=.." nor
	// "sha256=..", or a part of it is not what it should be.
	ErrSignatureMalformed = errors.New("webhook signature header is malformed")
	// ErrSignatureTimestamp: the canonical timestamp is more than
	// SignatureTolerance away from now (a replay, or a skewed clock).
	ErrSignatureTimestamp = errors.New("webhook signature timestamp is outside the tolerance")
	// ErrSignatureMismatch: no signature in the header matches the body
	// under any of the secrets given.
	ErrSignatureMismatch = errors.New("webhook signature does not match")
	// ErrNoSecrets: VerifyWebhook was called without a secret.
	ErrNoSecrets = errors.New("webhook verification needs at least one secret")
)

// NewWebhookSecret reads 32 bytes from rnd (crypto/rand.Reader in
// production) and returns them as 64 lower-case hex characters.
func NewWebhookSecret(rnd io.Reader) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("read webhook secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func hmacHex(secret string, parts ...[]byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// SignCanonical returns the canonical header value "t=<unix>,v1=<hex>".
func SignCanonical(secret string, at time.Time, body []byte) string {
	t := strconv.FormatInt(at.Unix(), 10)
	return "t=" + t + ",v1=" + hmacHex(secret, []byte(t), []byte("."), body)
}

// SignLegacy returns the legacy header value "sha256=<hex>".
func SignLegacy(secret string, body []byte) string {
	return "sha256=" + hmacHex(secret, body)
}

// SignWebhook signs body in the scheme of the event's family.
func SignWebhook(t EventType, secret string, at time.Time, body []byte) string {
	if t.Legacy() {
		return SignLegacy(secret, body)
	}
	return SignCanonical(secret, at, body)
}

// ParsedSignature is a signature header taken apart.
type ParsedSignature struct {
	// Legacy is true for "sha256=<hex>".
	Legacy bool
	// Timestamp is the canonical t= value (zero for legacy).
	Timestamp time.Time
	// Signatures are the decoded MACs (every v1=, or the sha256= one).
	Signatures [][]byte
}

// ParseSignatureHeader splits a signature header. Canonical headers may
// carry several v1= values (and unknown schemes, which are ignored), in any
// order; exactly one t= is required.
func ParseSignatureHeader(header string) (ParsedSignature, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return ParsedSignature{}, ErrSignatureMissing
	}
	if len(header) > 4096 {
		return ParsedSignature{}, ErrSignatureMalformed
	}
	if rest, ok := strings.CutPrefix(header, "sha256="); ok {
		mac, err := decodeMAC(rest)
		if err != nil {
			return ParsedSignature{}, err
		}
		return ParsedSignature{Legacy: true, Signatures: [][]byte{mac}}, nil
	}
	var (
		p     ParsedSignature
		haveT bool
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ParsedSignature{}, ErrSignatureMalformed
		}
		switch k {
		case "t":
			if haveT || v == "" || len(v) > 12 {
				return ParsedSignature{}, ErrSignatureMalformed
			}
			sec, err := strconv.ParseInt(v, 10, 64)
			if err != nil || sec < 0 || strconv.FormatInt(sec, 10) != v {
				return ParsedSignature{}, ErrSignatureMalformed
			}
			p.Timestamp, haveT = time.Unix(sec, 0).UTC(), true
		case "v1":
			mac, err := decodeMAC(v)
			if err != nil {
				return ParsedSignature{}, err
			}
			p.Signatures = append(p.Signatures, mac)
		}
	}
	if !haveT || len(p.Signatures) == 0 {
		return ParsedSignature{}, ErrSignatureMalformed
	}
	return p, nil
}

func decodeMAC(s string) ([]byte, error) {
	if len(s) != 2*sha256.Size {
		return nil, ErrSignatureMalformed
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, ErrSignatureMalformed
	}
	return b, nil
}

// VerifyWebhook checks a delivery's X-Quita-Signature header against its
// raw body, for merchants to embed. It accepts either scheme and any of
// several secrets (during a rotation, pass the new and the old). MACs are
// compared in constant time. A canonical signature must be dated within
// SignatureTolerance of now; the legacy scheme carries no time, so it
// cannot be checked for replay (dedupe on the delivery id instead).
//
// Errors: ErrNoSecrets, ErrSignatureMissing, ErrSignatureMalformed,
// ErrSignatureTimestamp, ErrSignatureMismatch.
func VerifyWebhook(header string, body []byte, now time.Time, secrets ...string) error {
	if len(secrets) == 0 {
		return ErrNoSecrets
	}
	p, err := ParseSignatureHeader(header)
	if err != nil {
		return err
	}
	if !p.Legacy {
		d := now.Sub(p.Timestamp)
		if d > SignatureTolerance || d < -SignatureTolerance {
			return ErrSignatureTimestamp
		}
	}
	t := []byte(strconv.FormatInt(p.Timestamp.Unix(), 10))
	match := 0
	for _, s := range secrets {
		if s == "" {
			continue
		}
		m := hmac.New(sha256.New, []byte(s))
		if !p.Legacy {
			m.Write(t)
			m.Write([]byte("."))
		}
		m.Write(body)
		want := m.Sum(nil)
		for _, got := range p.Signatures {
			// Every pair is compared, so timing does not say which matched.
			if hmac.Equal(want, got) {
				match++
			}
		}
	}
	if match == 0 {
		return ErrSignatureMismatch
	}
	return nil
}

// Webhook endpoints.

// EndpointStatus is a webhook endpoint's status. Values are API.
type EndpointStatus string

// Endpoint statuses.
const (
	EndpointActive   EndpointStatus = "ACTIVE"
	EndpointInactive EndpointStatus = "INACTIVE"
)

// Valid reports whether s is an endpoint status.
func (s EndpointStatus) Valid() bool { return s == EndpointActive || s == EndpointInactive }

// MaxWebhookURLLen bounds an endpoint URL.
const MaxWebhookURLLen = 2048

// WebhookEndpoint is a merchant's registered receiver in one mode.
type WebhookEndpoint struct {
	ID        string
	AccountID string
	Mode      Mode
	URL       string
	Events    []EventType
	Status    EndpointStatus
	// Secret signs every delivery; it is shown on create and rotate only.
	Secret    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Subscribes reports whether the endpoint receives events of type t now.
func (e *WebhookEndpoint) Subscribes(t EventType) bool {
	if e.Status != EndpointActive {
		return false
	}
	for _, x := range e.Events {
		if x == t {
			return true
		}
	}
	return false
}

// ValidateEvents checks a subscription list against the catalog and
// returns it without duplicates, in the order given.
func ValidateEvents(param string, events []string) ([]EventType, error) {
	if len(events) == 0 {
		return nil, &ValidationError{Param: param, Code: CodeParameterMissing, Message: param + " must list at least one event"}
	}
	seen := map[EventType]bool{}
	out := make([]EventType, 0, len(events))
	for i, e := range events {
		t := EventType(e)
		if !KnownEvent(t) {
			return nil, invalid(fmt.Sprintf("%s[%d]", param, i), "unknown event %q; see GET /v1/webhooks/event-catalog", e)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// ValidateWebhookURL checks the shape of a receiver URL: absolute http or
// https (https only when requireHTTPS), a host, no credentials, no
// fragment. Where it points (SSRF) is the URL guard's job.
func ValidateWebhookURL(param, raw string, requireHTTPS bool) (*url.URL, error) {
	if raw == "" {
		return nil, missing(param)
	}
	if len(raw) > MaxWebhookURLLen {
		return nil, invalid(param, "%s must be at most %d characters", param, MaxWebhookURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return nil, invalid(param, "%s must be an absolute http(s) URL", param)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, invalid(param, "%s must use https", param)
	case requireHTTPS && u.Scheme != "https":
		return nil, invalid(param, "%s must use https in live mode", param)
	case u.User != nil:
		return nil, invalid(param, "%s must not carry credentials", param)
	case u.Fragment != "":
		return nil, invalid(param, "%s must not carry a fragment", param)
	}
	return u, nil
}

// Webhook deliveries.

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
