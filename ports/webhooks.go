package ports

//go:generate go tool moq -rm -out ../mocks/webhooks.go -pkg mocks . WebhookStore WebhookOutbox WebhookSender URLGuard

import (
	"context"
	"errors"
	"time"

	"github.com/quitapix/quita/domain"
)

var (
	// ErrLeaseLost: the delivery's lease expired and another worker took
	// it (or it was cancelled); the result of this attempt is dropped.
	ErrLeaseLost = errors.New("delivery lease lost")
	// ErrURLForbidden: a webhook URL points at an address Quita must not
	// call (loopback, private, link-local, metadata) or uses a refused
	// scheme.
	ErrURLForbidden = errors.New("webhook url not allowed")
	// ErrURLUnresolved: a webhook URL's host could not be resolved (no
	// answer, a name server failure or timeout, no such name). It is the
	// broken rule of the *domain.ValidationError URLGuard returns: a
	// registration is refused, but at delivery time it is an attempt that
	// failed and is retried, since DNS comes back.
	ErrURLUnresolved = errors.New("webhook url host does not resolve")
)

// EndpointPatch changes an endpoint; nil fields stay as they are.
type EndpointPatch struct {
	URL    *string
	Events []domain.EventType
	Status *domain.EndpointStatus
}

// DeliveryQuery filters a delivery list of one scope, newest first.
type DeliveryQuery struct {
	Scope
	Status     domain.DeliveryStatus
	EventType  domain.EventType
	EndpointID string
	// ChargeID, when set, keeps the deliveries of one charge's events.
	ChargeID string
	// Limit is 1..100; Offset ≥ 0.
	Limit  int
	Offset int
}

// DeliveryStats counts a scope's deliveries by status.
type DeliveryStats map[domain.DeliveryStatus]int

// DeliveryClaim is a delivery leased to one worker for one attempt, with where and
// how to send it as they are now (an endpoint's current URL and secret,
// or the account's transaction secret for a per-transaction URL).
type DeliveryClaim struct {
	Delivery domain.WebhookDelivery
	URL      string
	Secret   string
	// LeaseToken proves the lease when the result is recorded.
	LeaseToken string
}

// ClaimCaps bound in-flight deliveries; zero means no bound.
type ClaimCaps struct {
	PerEndpoint int
	PerAccount  int
}

// WebhookStore keeps webhook endpoints and deliveries.
type WebhookStore interface {
	// CreateEndpoint inserts e. ErrDuplicate on an id collision.
	CreateEndpoint(ctx context.Context, e domain.WebhookEndpoint) error
	// ListEndpoints returns the scope's endpoints that are not deleted,
	// oldest first.
	ListEndpoints(ctx context.Context, scope Scope) ([]domain.WebhookEndpoint, error)
	// GetEndpoint returns ErrNotFound for an endpoint outside the scope or
	// deleted.
	GetEndpoint(ctx context.Context, scope Scope, id string) (*domain.WebhookEndpoint, error)
	// UpdateEndpoint applies p and returns the endpoint as saved.
	// ErrNotFound as GetEndpoint.
	UpdateEndpoint(ctx context.Context, scope Scope, id string, p EndpointPatch, now time.Time) (*domain.WebhookEndpoint, error)
	// RotateEndpointSecret replaces the secret; deliveries signed after
	// the call use the new one. ErrNotFound as GetEndpoint.
	RotateEndpointSecret(ctx context.Context, scope Scope, id, secret string, now time.Time) error
	// DeleteEndpoint marks the endpoint deleted and cancels its PENDING and
	// PROCESSING deliveries in one transaction. ErrNotFound as GetEndpoint.
	DeleteEndpoint(ctx context.Context, scope Scope, id string, now time.Time) error
	// RotateTransactionSecret replaces the transaction-webhook secret of
	// the scope's account and mode; the other mode's secret is untouched.
	// ErrNotFound for an unknown account.
	RotateTransactionSecret(ctx context.Context, scope Scope, secret string) error

	// ClaimDeliveries leases up to limit due deliveries until leaseUntil:
	// PENDING ones whose next attempt is due at now, and PROCESSING ones
	// whose lease expired (their worker died). Each claim counts an
	// attempt. Deliveries of an INACTIVE endpoint wait. On Postgres the
	// rows are picked with FOR UPDATE SKIP LOCKED, so concurrent workers
	// in any number of processes never claim the same delivery; SQLite
	// serialises claims under its write lock (one process).
	//
	// caps bound the deliveries in flight (claimed, lease not expired, in
	// every process) per endpoint and per account: a claim passes over an
	// endpoint or account at its cap and reaches past its backlog to
	// others', so slow receivers hold a bounded share of the workers.
	ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int, caps ClaimCaps) ([]DeliveryClaim, error)
	// CompleteDelivery saves d (status, attempts, last result, next retry)
	// if the lease token still holds: ErrLeaseLost otherwise. With
	// deactivate, the endpoint becomes INACTIVE and its other PENDING
	// deliveries CANCELLED in the same transaction (410 Gone).
	CompleteDelivery(ctx context.Context, d domain.WebhookDelivery, leaseToken string, deactivate bool) error
	// ListDeliveries returns a page and the total that match q.
	ListDeliveries(ctx context.Context, q DeliveryQuery) ([]domain.WebhookDelivery, int, error)
	// DeliveryStats counts the scope's deliveries per status.
	DeliveryStats(ctx context.Context, scope Scope) (DeliveryStats, error)
	// RequeueDelivery makes a finished delivery (DELIVERED, FAILED or
	// CANCELLED) of the scope due again at now for exactly one more
	// attempt (max_attempts becomes attempts + 1) and returns it as saved;
	// an open one (PENDING, PROCESSING), or one whose endpoint was deleted,
	// is returned unchanged. Its
	// history (attempts, last result) is kept. ErrNotFound outside the
	// scope.
	RequeueDelivery(ctx context.Context, scope Scope, id string, now time.Time) (*domain.WebhookDelivery, error)
}

// OutboxEvent is an undispatched charge event with what fan-out needs:
// everything but its Payload, which the store may leave out (most events
// go nowhere, and the envelope is the bulk of an event's row).
type OutboxEvent struct {
	domain.Event
	// WebhookURL is the charge's per-transaction webhookUrl ("" if none),
	// set for legacy events (domain.EventType.Legacy), the only ones it
	// receives.
	WebhookURL string
}

// OutboxBatch is a set of claimed events and the ACTIVE endpoints of the
// scopes they belong to.
type OutboxBatch struct {
	Events    []OutboxEvent
	Endpoints map[Scope][]domain.WebhookEndpoint
}

// WebhookOutbox turns outbox events into deliveries.
type WebhookOutbox interface {
	// DispatchEvents claims up to limit undispatched entries of the
	// outbox in order (FOR UPDATE SKIP LOCKED on Postgres), calls fan
	// with their events and the ACTIVE endpoints of their scopes, and in
	// the same transaction inserts the deliveries fan returned and takes
	// the entries out of the outbox. An entry is one event, or two events
	// of one change written together (a create's charge.created and
	// payment.created), so a batch holds up to 2 × limit events. Each
	// delivery is stored with the payload of its event (EventID, one of
	// the batch's) as committed, whatever fan set. An error from fan rolls
	// everything back. It returns the number of entries dispatched: limit
	// when more may be waiting.
	DispatchEvents(ctx context.Context, limit int, fan func(OutboxBatch) ([]domain.WebhookDelivery, error)) (int, error)
}

// WebhookRequest is one attempt's HTTP POST.
type WebhookRequest struct {
	URL       string
	Body      []byte
	Signature string
	// DeliveryID is unique per attempt (X-Quita-Delivery-Id).
	DeliveryID string
	EventType  domain.EventType
}

// WebhookSender posts deliveries to receivers.
type WebhookSender interface {
	// Send makes one attempt and reports what came back. It never follows
	// redirects and gives up after domain.AttemptTimeout. Transport
	// failures are in the result, not the error; the error is reserved
	// for ctx ending (the attempt's outcome is then unknown).
	Send(ctx context.Context, req WebhookRequest) (domain.AttemptResult, error)
}

// URLGuard keeps webhooks away from internal addresses (SSRF).
type URLGuard interface {
	// CheckURL validates a receiver URL for mode: its shape and scheme
	// (https in live mode) and that its host resolves only to public
	// addresses. Errors: *domain.ValidationError for the shape and for a
	// host that does not resolve (then wrapping ErrURLUnresolved),
	// ErrURLForbidden for the address.
	CheckURL(ctx context.Context, mode domain.Mode, rawURL string) error
}
