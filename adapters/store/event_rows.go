package store

import (
	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type eventRow struct {
	bun.BaseModel `bun:"table:charge_events,alias:e"`

	// Seq is assigned by the database in the order rows are written.
	Seq       int64  `bun:"seq,scanonly"`
	ID        string `bun:"id"`
	AccountID string `bun:"account_id"`
	Mode      string `bun:"mode"`
	ChargeID  string `bun:"charge_id"`
	Type      string `bun:"type"`
	Payload   []byte `bun:"payload"`
	CreatedAt dbTime `bun:"created_at"`
}

func eventsFromDomain(evs []domain.Event) []eventRow {
	rows := make([]eventRow, len(evs))
	for i, e := range evs {
		rows[i] = eventRow{
			ID:        e.ID,
			AccountID: e.AccountID,
			Mode:      string(e.Mode),
			ChargeID:  e.ChargeID,
			Type:      string(e.Type),
			Payload:   nonNil(e.Payload),
			CreatedAt: newDBTime(e.CreatedAt),
		}
	}
	return rows
}

func (r *eventRow) toDomain() domain.Event {
	return domain.Event{
		ID:        r.ID,
		Type:      domain.EventType(r.Type),
		AccountID: r.AccountID,
		Mode:      domain.Mode(r.Mode),
		ChargeID:  r.ChargeID,
		CreatedAt: r.CreatedAt.Time,
		Payload:   r.Payload,
	}
}

// nonNil keeps an empty body from becoming NULL in a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

type idempotencyRow struct {
	bun.BaseModel `bun:"table:idempotency_records,alias:i"`

	AccountID   string `bun:"account_id,pk"`
	Mode        string `bun:"mode,pk"`
	Key         string `bun:"key,pk"`
	Fingerprint string `bun:"fingerprint"`
	ResourceID  string `bun:"resource_id"`
	StatusCode  int    `bun:"status_code"`
	Body        []byte `bun:"body"`
	CreatedAt   dbTime `bun:"created_at"`
}

func idempotencyFromPort(r *ports.IdempotencyRecord) *idempotencyRow {
	return &idempotencyRow{
		AccountID:   r.AccountID,
		Mode:        string(r.Mode),
		Key:         r.Key,
		Fingerprint: r.Fingerprint,
		ResourceID:  r.ResourceID,
		StatusCode:  r.StatusCode,
		Body:        nonNil(r.Body),
		CreatedAt:   newDBTime(r.CreatedAt),
	}
}

func (r *idempotencyRow) toPort() *ports.IdempotencyRecord {
	return &ports.IdempotencyRecord{
		IdempotencyKey: ports.IdempotencyKey{
			Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)},
			Key:   r.Key,
		},
		Fingerprint: r.Fingerprint,
		ResourceID:  r.ResourceID,
		StatusCode:  r.StatusCode,
		Body:        r.Body,
		CreatedAt:   r.CreatedAt.Time,
	}
}
