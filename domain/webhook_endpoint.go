package domain

import (
	"errors"
	"net/url"
	"time"
)

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

// ErrUnknownEvent is the rule an events list breaks when it names an event
// outside EventCatalog; the ValidationError for it unwraps to this, so an
// adapter can point the caller at its catalog.
var ErrUnknownEvent = errors.New("unknown event")

// ValidateEvents checks a subscription list (FieldEvents) against the
// catalog and returns it without duplicates, in the order given.
func ValidateEvents(events []string) ([]EventType, error) {
	if len(events) == 0 {
		return nil, NewValidationError(FieldEvents, CodeParameterMissing, "%s must list at least one event", FieldEvents)
	}
	seen := map[EventType]bool{}
	out := make([]EventType, 0, len(events))
	for i, e := range events {
		t := EventType(e)
		if !KnownEvent(t) {
			return nil, &ValidationError{Field: FieldEvents, Indexed: true, Index: i, Code: CodeParameterInvalid, Err: ErrUnknownEvent,
				format: "unknown event %q", args: []any{e}}
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
// fragment. Errors name FieldWebhookURL. Where it points (SSRF) is the URL
// guard's job.
func ValidateWebhookURL(raw string, requireHTTPS bool) (*url.URL, error) {
	if raw == "" {
		return nil, Missing(FieldWebhookURL)
	}
	if len(raw) > MaxWebhookURLLen {
		return nil, Invalid(FieldWebhookURL, "%s must be at most %d characters", FieldWebhookURL, MaxWebhookURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return nil, Invalid(FieldWebhookURL, "%s must be an absolute http(s) URL", FieldWebhookURL)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, Invalid(FieldWebhookURL, "%s must use https", FieldWebhookURL)
	case requireHTTPS && u.Scheme != "https":
		return nil, Invalid(FieldWebhookURL, "%s must use https in live mode", FieldWebhookURL)
	case u.User != nil:
		return nil, Invalid(FieldWebhookURL, "%s must not carry credentials", FieldWebhookURL)
	case u.Fragment != "":
		return nil, Invalid(FieldWebhookURL, "%s must not carry a fragment", FieldWebhookURL)
	}
	return u, nil
}
