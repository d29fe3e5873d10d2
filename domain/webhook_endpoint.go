package domain

import (
	"fmt"
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
