package app

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Webhook endpoint management: register, list, update, delete and rotate
// endpoints and the per-mode transaction secret. Delivery is in webhooks.go.

// EndpointInput registers an endpoint.
type EndpointInput struct {
	URL    string
	Events []string
}

// EndpointUpdate changes an endpoint; nil fields stay.
type EndpointUpdate struct {
	URL    *string
	Events *[]string
	Status *string
}

func (s *WebhookService) newSecret() (string, error) { return domain.NewWebhookSecret(rand.Reader) }

// MaxEndpoints bounds an account's endpoints in one mode, so one tenant
// cannot multiply the deliveries (and the slow receivers) it puts in front
// of everyone else's (security.md, item 7).
const MaxEndpoints = 16

// ErrTooManyEndpoints: the account already has MaxEndpoints in this mode.
var ErrTooManyEndpoints = errors.New("webhook endpoint limit reached")

// CreateEndpoint registers an endpoint, ACTIVE, with a fresh secret.
// ErrTooManyEndpoints past MaxEndpoints (checked before the insert, so two
// creates racing at the limit may both pass).
func (s *WebhookService) CreateEndpoint(ctx context.Context, caller Caller, in EndpointInput) (domain.WebhookEndpoint, error) {
	events, err := domain.ValidateEvents(in.Events)
	if err != nil {
		return domain.WebhookEndpoint{}, err
	}
	if err := s.urlChecks.check(ctx, caller, in.URL); err != nil {
		return domain.WebhookEndpoint{}, err
	}
	existing, err := s.store.ListEndpoints(ctx, caller.Scope())
	if err != nil {
		return domain.WebhookEndpoint{}, err
	}
	if len(existing) >= MaxEndpoints {
		return domain.WebhookEndpoint{}, ErrTooManyEndpoints
	}
	raw, err := s.ids.NewID()
	if err != nil {
		return domain.WebhookEndpoint{}, err
	}
	secret, err := s.newSecret()
	if err != nil {
		return domain.WebhookEndpoint{}, err
	}
	now := s.clock.Now()
	e := domain.WebhookEndpoint{
		ID: domain.PrefixEndpoint + raw, AccountID: caller.Account.ID, Mode: caller.Mode, URL: in.URL,
		Events: events, Status: domain.EndpointActive, Secret: secret, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.store.CreateEndpoint(ctx, e); err != nil {
		return domain.WebhookEndpoint{}, err
	}
	return e, nil
}

// ListEndpoints lists the caller's endpoints (with secrets: the HTTP layer
// leaves them out).
func (s *WebhookService) ListEndpoints(ctx context.Context, caller Caller) ([]domain.WebhookEndpoint, error) {
	return s.store.ListEndpoints(ctx, caller.Scope())
}

// UpdateEndpoint changes url, events and/or status.
func (s *WebhookService) UpdateEndpoint(ctx context.Context, caller Caller, id string, in EndpointUpdate) (*domain.WebhookEndpoint, error) {
	var p ports.EndpointPatch
	if in.URL != nil {
		if err := s.urlChecks.check(ctx, caller, *in.URL); err != nil {
			return nil, err
		}
		p.URL = in.URL
	}
	if in.Events != nil {
		evs, err := domain.ValidateEvents(*in.Events)
		if err != nil {
			return nil, err
		}
		p.Events = evs
	}
	if in.Status != nil {
		st := domain.EndpointStatus(*in.Status)
		if !st.Valid() {
			return nil, domain.Invalid(domain.FieldStatus, "%s must be ACTIVE or INACTIVE", domain.FieldStatus)
		}
		p.Status = &st
	}
	if !validEndpointID(id) {
		return nil, ports.ErrNotFound
	}
	return s.store.UpdateEndpoint(ctx, caller.Scope(), id, p, s.clock.Now())
}

func validEndpointID(id string) bool {
	raw, ok := strings.CutPrefix(id, domain.PrefixEndpoint)
	return ok && domain.ValidRawID(raw)
}

// DeleteEndpoint removes an endpoint; its pending deliveries are CANCELLED.
func (s *WebhookService) DeleteEndpoint(ctx context.Context, caller Caller, id string) error {
	if !validEndpointID(id) {
		return ports.ErrNotFound
	}
	return s.store.DeleteEndpoint(ctx, caller.Scope(), id, s.clock.Now())
}

// RotateEndpointSecret replaces an endpoint's secret with no overlap and
// returns the new one (shown once).
func (s *WebhookService) RotateEndpointSecret(ctx context.Context, caller Caller, id string) (string, error) {
	if !validEndpointID(id) {
		return "", ports.ErrNotFound
	}
	secret, err := s.newSecret()
	if err != nil {
		return "", err
	}
	if err := s.store.RotateEndpointSecret(ctx, caller.Scope(), id, secret, s.clock.Now()); err != nil {
		return "", err
	}
	return secret, nil
}

// RotateTransactionSecret replaces the transaction-webhook secret of the
// caller's mode and returns the new one (shown once). A test key never
// sees or changes the live secret.
func (s *WebhookService) RotateTransactionSecret(ctx context.Context, caller Caller) (string, error) {
	secret, err := s.newSecret()
	if err != nil {
		return "", err
	}
	if err := s.store.RotateTransactionSecret(ctx, caller.Scope(), secret); err != nil {
		return "", err
	}
	return secret, nil
}

// ErrDeliveryNotResendable: the delivery's endpoint was deleted, so there
// is nowhere to send it again.
var ErrDeliveryNotResendable = errors.New("the delivery's endpoint was deleted")

// ResendDelivery sends a finished delivery of the caller's once more, at
// once and with one attempt; its earlier attempts stay counted. A
// delivery still open is left as it is. ErrNotFound outside the caller's
// scope; ErrDeliveryNotResendable when its endpoint was deleted.
func (s *WebhookService) ResendDelivery(ctx context.Context, caller Caller, id string) (*domain.WebhookDelivery, error) {
	raw, ok := strings.CutPrefix(id, domain.PrefixDelivery)
	if !ok || !domain.ValidRawID(raw) {
		return nil, ports.ErrNotFound
	}
	d, err := s.store.RequeueDelivery(ctx, caller.Scope(), id, s.clock.Now())
	if err != nil {
		return nil, err
	}
	if d.Status != domain.DeliveryPending && d.Status != domain.DeliveryProcessing {
		return nil, ErrDeliveryNotResendable
	}
	s.notify()
	return d, nil
}
