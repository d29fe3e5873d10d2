package store

import (
	"encoding/json"
	"errors"
	"fmt"

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
	// AnswersKey is the idempotency key whose record names this event
	// as holding its answer (idempotencyRow.BodyEvent), else nil.
	AnswersKey *string `bun:"answers_key"`
	// TwinID, TwinType and TwinPayload are the row's second event, nil
	// when it holds one (migration 20261128000002): an event of the same
	// change — charge, scope and instant — placed just after the first in
	// every order seq gives. eventsFromDomain pairs them, events splits
	// them again.
	TwinID      *string `bun:"twin_id"`
	TwinType    *string `bun:"twin_type"`
	TwinPayload []byte  `bun:"twin_payload"`
}

// eventsFromDomain is the rows of one change's events, in their order, two
// to a row where they can share one (pairable): as two rows, a create's
// charge.created and payment.created cost a second heap row and four
// more index entries, a tenth of the create benchmark's Postgres time
// (docs/performance.md).
func eventsFromDomain(evs []domain.Event) []eventRow {
	rows := make([]eventRow, 0, len(evs))
	for i := 0; i < len(evs); i++ {
		e := evs[i]
		r := eventRow{
			ID:        e.ID,
			AccountID: e.AccountID,
			Mode:      string(e.Mode),
			ChargeID:  e.ChargeID,
			Type:      string(e.Type),
			Payload:   nonNil(e.Payload),
			CreatedAt: newDBTime(e.CreatedAt),
		}
		if i+1 < len(evs) && pairable(e, evs[i+1]) {
			t := evs[i+1]
			typ := string(t.Type)
			r.TwinID, r.TwinType, r.TwinPayload = &t.ID, &typ, nonNil(t.Payload)
			i++
		}
		rows = append(rows, r)
	}
	return rows
}

// pairable reports whether b can be a's twin: what a row holds once for
// both is the same, and neither is empty.
func pairable(a, b domain.Event) bool {
	return a.AccountID == b.AccountID && a.Mode == b.Mode && a.ChargeID == b.ChargeID &&
		newDBTime(a.CreatedAt).Equal(newDBTime(b.CreatedAt).Time) && a.ID != "" && b.ID != "" && a.ID != b.ID
}

// events appends the row's events to out in their order: its own, then
// its twin's. It is the one place a row is split into events: every
// reader of charge_events goes through it, whatever columns it read.
func (r *eventRow) events(out []domain.Event) []domain.Event {
	e := domain.Event{
		ID:        r.ID,
		Type:      domain.EventType(r.Type),
		AccountID: r.AccountID,
		Mode:      domain.Mode(r.Mode),
		ChargeID:  r.ChargeID,
		CreatedAt: r.CreatedAt.Time,
		Payload:   r.Payload,
	}
	out = append(out, e)
	if r.TwinID != nil {
		e.ID, e.Type, e.Payload = *r.TwinID, domain.EventType(deref(r.TwinType)), r.TwinPayload
		out = append(out, e)
	}
	return out
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
	// BodyEvent names the event whose envelope holds the answer as its
	// data.object; Body is then empty (a create's answer is stored once,
	// pointAnswer). Nil when Body is the answer.
	BodyEvent *string `bun:"body_event"`
	// InEvent, read with answerColumns, says that Body holds the payload
	// of BodyEvent rather than the answer itself (resolve).
	InEvent bool `bun:"in_event,scanonly"`
}

// answerColumns reads a record's answer as body and in_event: its body,
// or the payload of the event it names, which resolve opens. A record is
// read through its primary key alone; the event through its id.
const answerColumns = `CASE WHEN body_event IS NULL THEN body ELSE (SELECT ae.payload FROM charge_events AS ae WHERE ae.id = body_event) END AS body, body_event IS NOT NULL AS in_event`

// resolve turns a body read with answerColumns into the answer: the
// data.object of the event's envelope, byte for byte as it was answered.
func (r *idempotencyRow) resolve() error {
	if !r.InEvent {
		return nil
	}
	if r.Body == nil {
		return errors.New("store: the event holding an idempotency record's answer is gone")
	}
	answer, err := answerOf(r.Body)
	if err != nil {
		return err
	}
	r.Body, r.InEvent = answer, false
	return nil
}

// answerOf is the data.object of an event's envelope, as its bytes.
func answerOf(payload []byte) ([]byte, error) {
	var env struct {
		Data struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(payload, &env); err != nil {
		return nil, fmt.Errorf("store: reading the answer in an event: %w", err)
	}
	if len(env.Data.Object) == 0 {
		return nil, errors.New("store: the event named by an idempotency record holds no answer")
	}
	return env.Data.Object, nil
}

// pointAnswer stores c's answer once: when the event the write names
// (ports.IdempotencyRecord.AnswerEvent) carries the answer as its
// envelope's data.object — a charge create's 201 body is its
// charge.created event's object — the record names that event and keeps
// no body of its own, and the event names the record's key. The bytes are
// checked (domain.EnvelopeEndsWithObject), so the answer read back
// (resolve) is the one given, whatever encoded it; any other answer (the
// payments surface's, say) is stored as it is.
func (c *chargeCreate) pointAnswer(answerEvent string) {
	if c.idem == nil || len(c.idem.Body) == 0 || answerEvent == "" {
		return
	}
	for i := range c.evs {
		if c.evs[i].ID != answerEvent || !domain.EnvelopeEndsWithObject(c.evs[i].Payload, c.idem.Body) {
			continue
		}
		id := c.evs[i].ID
		c.idem.BodyEvent, c.idem.Body = &id, []byte{}
		c.evs[i].AnswersKey = &c.idem.Key
		return
	}
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
