package ports

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
)

// EventQuery filters the events list of one scope. Results are newest
// first, in the order the events were written.
type EventQuery struct {
	Scope
	// Limit is 1..100.
	Limit int
	// StartingAfter (an evt_ id) asks for the events written before it;
	// EndingBefore for the Limit events written just after it. At most
	// one is set.
	StartingAfter string
	EndingBefore  string
	// Types, when not empty, keeps only these types.
	Types []domain.EventType
	// CreatedAfter and CreatedBefore are inclusive bounds.
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// AfterSeq, when > 0, keeps only events written after the point in
	// write order EventHead or EventScopesSince returned: a long-poll that
	// read the page empty once looks again at what came since, not at the
	// whole history.
	AfterSeq int64
}

// MaxEventScan is the most event rows one page of a filtered events query
// (Types, CreatedBefore) examines. A filter matching none of them ends
// the page with More and Next, the cursor past the last row examined, so
// a filter that matches nothing never reads an account's whole history.
const MaxEventScan = 1000

// EventPage is one page of the events list.
type EventPage struct {
	Events []domain.Event
	// More reports that events may lie beyond the page in the direction
	// asked.
	More bool
	// Next, when More, is the cursor that continues: the last event of
	// the page, or, when the page examined MaxEventScan rows without
	// filling up, the last event examined (which the page may not show).
	Next string
}

// ScopeSeq is a scope with events written after a point in write order,
// and the newest of them.
type ScopeSeq struct {
	Scope
	Seq int64
}

// EventOutbox reads the events written with charge changes.
type EventOutbox interface {
	// ListChargeEvents returns a charge's events in the order written.
	ListChargeEvents(ctx context.Context, scope Scope, chargeID string) ([]domain.Event, error)
	// ListEvents returns a page of the scope's events (older, or newer
	// with EndingBefore) and how to continue. A filtered page examines at
	// most MaxEventScan rows. ErrNotFound when a cursor is not an event of
	// the scope.
	ListEvents(ctx context.Context, q EventQuery) (EventPage, error)
	// EventHead returns the newest point in write order (0 when there are
	// no events), for EventQuery.AfterSeq and EventScopesSince.
	EventHead(ctx context.Context) (int64, error)
	// EventScopesSince returns, for up to limit scopes, each scope with
	// events written after point after and its newest such point, reading
	// only the write-order index. An event whose transaction commits after
	// a later one's may be written before a point already returned.
	EventScopesSince(ctx context.Context, after int64, limit int) ([]ScopeSeq, error)
	// GetEvent returns one event of the scope (id with its evt_ prefix);
	// ErrNotFound for an id outside it.
	GetEvent(ctx context.Context, scope Scope, id string) (*domain.Event, error)
	// DeleteEventsBefore removes up to limit events, of any scope, created
	// before t and already fanned out to deliveries (an undispatched event
	// is never deleted), and returns how many it removed. Two events of
	// one change written together go together, so a limit of 1 may
	// remove 2. A store that keeps events by month may first drop every
	// month wholly before t, beyond limit (the count then includes an
	// estimate of their rows).
	DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error)
}
