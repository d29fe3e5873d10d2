package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// APIVersion is the date the canonical envelopes carry in api_version.
const APIVersion = "2026-11-01"

// EventType names an event a merchant may subscribe to.
type EventType string

// Canonical events.
const (
	EventChargeCreated  EventType = "charge.created"
	EventChargePaid     EventType = "charge.paid"
	EventChargeFailed   EventType = "charge.failed"
	EventChargeExpired  EventType = "charge.expired"
	EventChargeRefunded EventType = "charge.refunded"
	EventChargeDisputed EventType = "charge.disputed"
	// EventChargeOverdue: a due-date charge is still unpaid after its due
	// date (sent once, the day after it, while it can still be paid).
	EventChargeOverdue EventType = "charge.overdue"
	EventPayoutCreated EventType = "payout.created"
	EventPayoutPaid    EventType = "payout.paid"
	EventPayoutFailed  EventType = "payout.failed"
	// Subscriptions (Pix Automático): the mandate's life and each cycle's
	// charge, with the subscription as data.object.
	EventSubscriptionCreated         EventType = "subscription.created"
	EventSubscriptionAuthorized      EventType = "subscription.authorized"
	EventSubscriptionRejected        EventType = "subscription.rejected"
	EventSubscriptionCancelled       EventType = "subscription.cancelled"
	EventSubscriptionExpired         EventType = "subscription.expired"
	EventSubscriptionCompleted       EventType = "subscription.completed"
	EventSubscriptionChargeScheduled EventType = "subscription.charge_scheduled"
	EventSubscriptionChargePaid      EventType = "subscription.charge_paid"
	EventSubscriptionChargeFailed    EventType = "subscription.charge_failed"
	EventSubscriptionChargeRetrying  EventType = "subscription.charge_retrying"
	// EventTransferCreated: money moved between a platform and one of
	// its sub-accounts: a transfer (transfer.go), sent to both sides'
	// scopes, or a sub-account's share of its platform's split charge
	// (split_events.go), in the sub-account's scope.
	EventTransferCreated EventType = "transfer.created"
)

// Legacy events (payment.* and withdrawal.*).
const (
	EventPaymentCreated          EventType = "payment.created"
	EventPaymentCompleted        EventType = "payment.completed"
	EventPaymentFailed           EventType = "payment.failed"
	EventPaymentExpired          EventType = "payment.expired"
	EventPaymentRefunded         EventType = "payment.refunded"
	EventPaymentStatusChanged    EventType = "payment.status_changed"
	EventWithdrawalCreated       EventType = "withdrawal.created"
	EventWithdrawalCompleted     EventType = "withdrawal.completed"
	EventWithdrawalFailed        EventType = "withdrawal.failed"
	EventWithdrawalStatusChanged EventType = "withdrawal.status_changed"
)

// Legacy reports whether the event belongs to the legacy family, delivered
// in the legacy envelope and signed with the sha256= scheme.
func (t EventType) Legacy() bool {
	return strings.HasPrefix(string(t), "payment.") || strings.HasPrefix(string(t), "withdrawal.")
}

// EventDefinition is one entry of the event catalog.
type EventDefinition struct {
	Event       EventType `json:"event"`
	Description string    `json:"description"`
	Legacy      bool      `json:"legacy,omitempty"`
}

// EventCatalog lists every subscribable event.
var EventCatalog = []EventDefinition{
	{EventChargeCreated, "Charge created, awaiting payment.", false},
	{EventChargePaid, "Charge paid and confirmed.", false},
	{EventChargeFailed, "Charge failed or was cancelled.", false},
	{EventChargeExpired, "Charge expired unpaid.", false},
	{EventChargeRefunded, "Charge refunded in full, or the payment was returned to a payer the payer lock refused.", false},
	{EventChargeDisputed, "Charge disputed or charged back by the card holder.", false},
	{EventChargeOverdue, "Due-date charge unpaid after its due date; still payable with its fine and interest.", false},
	{EventPayoutCreated, "Withdrawal requested.", false},
	{EventPayoutPaid, "Withdrawal settled.", false},
	{EventPayoutFailed, "Withdrawal failed or rejected.", false},
	{EventSubscriptionCreated, "Subscription created, awaiting the payer's authorization.", false},
	{EventSubscriptionAuthorized, "Subscription's mandate authorized by the payer: cycles are scheduled.", false},
	{EventSubscriptionRejected, "Subscription's mandate rejected by the payer.", false},
	{EventSubscriptionCancelled, "Subscription cancelled by the merchant or revoked by the payer.", false},
	{EventSubscriptionExpired, "Subscription's mandate not authorized before its deadline.", false},
	{EventSubscriptionCompleted, "Subscription's last cycle closed (end_date reached).", false},
	{EventSubscriptionChargeScheduled, "A cycle's charge was created and sent to the payer's bank for debit.", false},
	{EventSubscriptionChargePaid, "A cycle's debit was paid.", false},
	{EventSubscriptionChargeFailed, "A cycle's debit failed and no retry is left.", false},
	{EventSubscriptionChargeRetrying, "A cycle's debit failed; a retry is scheduled.", false},
	{EventTransferCreated, "Money moved between a platform and its sub-account: a transfer, or a sub-account's share of a split charge.", false},
	{EventPaymentCreated, "Transaction created (legacy name of charge.created).", true},
	{EventPaymentCompleted, "Transaction PAID or APPROVED (legacy name of charge.paid).", true},
	{EventPaymentFailed, "Transaction REFUSED, CANCELLED, EXPIRED, CHARGEBACK or DISPUTE.", true},
	{EventPaymentExpired, "Transaction EXPIRED (legacy name of charge.expired).", true},
	{EventPaymentRefunded, "Refund progress on a transaction.", true},
	{EventPaymentStatusChanged, "Any transaction status change (alias).", true},
	{EventWithdrawalCreated, "Withdrawal requested (legacy name of payout.created).", true},
	{EventWithdrawalCompleted, "Withdrawal settled (legacy name of payout.paid).", true},
	{EventWithdrawalFailed, "Withdrawal failed (legacy name of payout.failed).", true},
	{EventWithdrawalStatusChanged, "Any withdrawal status change (alias).", true},
}

// KnownEvent reports whether t is in the catalog.
func KnownEvent(t EventType) bool {
	for _, d := range EventCatalog {
		if d.Event == t {
			return true
		}
	}
	return false
}

// CreationEvents are emitted when a charge opens for payment.
func CreationEvents() []EventType {
	return []EventType{EventChargeCreated, EventPaymentCreated}
}

// TransitionEvents lists the events a status change emits, per the spec's
// emission rules and the design's table. A change to the same status emits
// nothing.
func TransitionEvents(from, to TxStatus) []EventType {
	if from == to {
		return nil
	}
	var out []EventType
	switch to {
	case TxPaid, TxApproved:
		if from != TxDispute {
			out = append(out, EventChargePaid, EventPaymentCompleted)
		}
	case TxRefunded:
		out = append(out, EventChargeRefunded, EventPaymentRefunded)
	case TxExpired:
		out = append(out, EventChargeExpired, EventPaymentExpired, EventPaymentFailed)
	case TxCancelled, TxRefused:
		out = append(out, EventChargeFailed, EventPaymentFailed)
	case TxChargeback, TxDispute:
		if from != TxDispute {
			out = append(out, EventChargeDisputed)
		}
		out = append(out, EventPaymentFailed)
	case TxPending, TxWaitingPayment, TxProcessing:
	}
	if from != TxPending || to != TxWaitingPayment {
		out = append(out, EventPaymentStatusChanged)
	}
	return out
}

// Event is one business event, stored in the outbox in the same database
// transaction as the change that caused it. Payload is the envelope exactly
// as it will be delivered; ID is stable across delivery retries.
type Event struct {
	ID        string
	Type      EventType
	AccountID string
	Mode      Mode
	ChargeID  string
	CreatedAt time.Time
	Payload   []byte
}

// CanonicalEnvelope is the body of charge.*, payout.* and subscription.*
// deliveries.
type CanonicalEnvelope struct {
	ID         string    `json:"id"`
	Object     string    `json:"object"`
	APIVersion string    `json:"api_version"`
	Type       EventType `json:"type"`
	CreatedAt  Timestamp `json:"created_at"`
	Data       struct {
		Object any `json:"object"`
	} `json:"data"`
}

// LegacyEnvelope is the body of payment.* and withdrawal.* deliveries.
type LegacyEnvelope struct {
	Event EventType  `json:"event"`
	Data  LegacyData `json:"data"`
}

// LegacyData is the data of a legacy envelope.
type LegacyData struct {
	TransactionID  string    `json:"transactionId"`
	CustomerID     string    `json:"customerId,omitempty"`
	Amount         int64     `json:"amount"`
	Status         TxStatus  `json:"status"`
	PreviousStatus *TxStatus `json:"previousStatus"`
	PaidWith       *Method   `json:"paidWith,omitempty"`
	ProviderFee    *int64    `json:"providerFee,omitempty"`
	PlatformFee    *int64    `json:"platformFee,omitempty"`
	NetAmount      *int64    `json:"netAmount,omitempty"`
	RefundID       string    `json:"refundId,omitempty"`
	RefundStatus   string    `json:"refundStatus,omitempty"`
	RefundAmount   *int64    `json:"refundAmount,omitempty"`
	// RefundStrategy, RefundDestinationKey (masked, as Refund.Destination
	// shows it) and its type, and RefundFee say where a refund's money went
	// and what it cost.
	RefundStrategy           string    `json:"refundStrategy,omitempty"`
	RefundDestinationKey     string    `json:"refundDestinationKey,omitempty"`
	RefundDestinationKeyType string    `json:"refundDestinationKeyType,omitempty"`
	RefundFee                *int64    `json:"refundFee,omitempty"`
	OccurredAt               Timestamp `json:"occurredAt"`
}

// NewChargeEvents builds the outbox events for a change of c from status
// prev ("" for creation) to its current status. newID supplies raw ids.
func NewChargeEvents(c *Charge, prev TxStatus, types []EventType, l Links, newID func() (string, error), now time.Time) ([]Event, error) {
	out := make([]Event, 0, len(types))
	for _, t := range types {
		raw, err := newID()
		if err != nil {
			return nil, err
		}
		ev := Event{
			ID: PrefixEvent + raw, Type: t, AccountID: c.s.AccountID, Mode: c.s.Mode,
			ChargeID: c.s.ID, CreatedAt: now.UTC(),
		}
		var body any
		if t.Legacy() {
			body = c.legacyEnvelope(t, prev, now)
		} else {
			env := CanonicalEnvelope{ID: ev.ID, Object: "event", APIVersion: APIVersion, Type: t, CreatedAt: Timestamp(now)}
			env.Data.Object = c.Public(l)
			body = env
		}
		if ev.Payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("encode %s envelope: %w", t, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// canonicalObjectPrefix and canonicalObjectSuffix are what a canonical
// envelope has around its data.object: data is CanonicalEnvelope's last
// field, object its only one, and no field before data holds a caller's
// text.
var canonicalObjectPrefix, canonicalObjectSuffix = []byte(`"data":{"object":`), []byte(`}}`)

// EnvelopeEndsWithObject reports whether payload's last bytes are
// object as its data.object, laid out as a canonical envelope lays it out:
// `"data":{"object":`, object, `}}`. The test is on the bytes, so the
// data.object read back from payload is object byte for byte, whatever
// encoded either; a store may then keep object once, in the event (a
// charge create's 201 body is its charge.created event's object).
func EnvelopeEndsWithObject(payload, object []byte) bool {
	end := len(payload) - len(canonicalObjectSuffix)
	start := end - len(object)
	return len(object) > 0 && start >= len(canonicalObjectPrefix) && bytes.Equal(payload[end:], canonicalObjectSuffix) &&
		bytes.Equal(payload[start:end], object) && bytes.Equal(payload[start-len(canonicalObjectPrefix):start], canonicalObjectPrefix)
}

// CanonicalObject is the data.object of e's envelope, as its bytes, when e
// is a canonical event NewChargeEvents built: the charge's public object,
// encoded as json.Marshal encodes Charge.Public — what a create on the
// charges surface answers, taken from its charge.created event instead of
// encoding the charge a second time (app.AnswerPublic). ok is false for a
// legacy event.
func (e Event) CanonicalObject() (object []byte, ok bool) {
	if e.Type.Legacy() {
		return nil, false
	}
	i := bytes.Index(e.Payload, canonicalObjectPrefix)
	if i < 0 || !bytes.HasSuffix(e.Payload, canonicalObjectSuffix) {
		return nil, false
	}
	end := len(e.Payload) - len(canonicalObjectSuffix)
	return e.Payload[i+len(canonicalObjectPrefix) : end : end], true
}

func (c *Charge) legacyEnvelope(t EventType, prev TxStatus, now time.Time) LegacyEnvelope {
	d := LegacyData{
		TransactionID: PrefixTransaction + c.s.ID,
		CustomerID:    c.s.CustomerRef,
		Amount:        c.PaidAmount(),
		Status:        c.s.Status,
		OccurredAt:    Timestamp(now),
	}
	if prev != "" {
		p := prev
		d.PreviousStatus = &p
	}
	if c.s.Status.Settled() && c.s.Settlement != nil {
		m := c.s.Settlement.PaidWith
		pf, plf, net := c.s.Fees.Provider, c.s.Fees.Platform, c.s.Fees.Net(c.PaidAmount())
		d.PaidWith, d.ProviderFee, d.PlatformFee, d.NetAmount = &m, &pf, &plf, &net
	}
	return LegacyEnvelope{Event: t, Data: d}
}

// StatusEvents re-emits the events of the charge's current status, for a
// webhook resend: the legacy status event plus its canonical counterpart.
func StatusEvents(c *Charge, l Links, newID func() (string, error), now time.Time) ([]Event, error) {
	types := TransitionEvents("", c.s.Status)
	if c.s.Status.Open() {
		types = CreationEvents()
	}
	return NewChargeEvents(c, "", types, l, newID, now)
}

// PublicEvent is an event as GET /v1/events shows it: the envelope exactly
// as it was (or will be) delivered, with what the events API adds
// (MarshalJSON), so a merchant can feed it to the same code as its webhook
// handler; Payload is that envelope.
type PublicEvent struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Type      EventType       `json:"type"`
	Legacy    bool            `json:"legacy"`
	Livemode  bool            `json:"livemode"`
	CreatedAt Timestamp       `json:"created_at"`
	Payload   json.RawMessage `json:"payload"`
}

// MarshalJSON writes the event as the object its webhook delivers: the
// members of Payload first, byte for byte and in their order (id, object,
// api_version, type, created_at and data for a canonical envelope; event
// and data for a legacy one), then those of id, object, type, legacy,
// livemode and created_at the envelope has no member of that name for,
// then payload, the envelope whole. No envelope has a member named legacy,
// livemode or payload, so no name appears twice. A Payload that is not a
// JSON object has no members to give: the event is then the API's members
// with that payload.
func (p PublicEvent) MarshalJSON() ([]byte, error) {
	type plain PublicEvent // without this method
	var envelope map[string]json.RawMessage
	body := bytes.TrimSpace(p.Payload)
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &envelope) != nil {
		return json.Marshal(plain(p))
	}
	inner := bytes.TrimSpace(body[1 : len(body)-1])
	out := make([]byte, 0, 2*len(body)+192)
	out = append(append(out, '{'), inner...)
	for _, m := range []struct {
		name  string
		value any
	}{
		{"id", p.ID}, {"object", p.Object}, {"type", p.Type}, {"legacy", p.Legacy}, {"livemode", p.Livemode},
		{"created_at", p.CreatedAt}, {"payload", json.RawMessage(body)},
	} {
		if _, has := envelope[m.name]; has {
			continue
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(append(out, '"'), m.name...), `":`...), v...)
	}
	return append(out, '}'), nil
}

// Masked is the event as a list shows it: documents in the payload keep
// only their last two characters (docs/decisions.md, "Documents in
// lists"); GET /v1/events/{id} returns the payload exactly as delivered.
func (p PublicEvent) Masked() PublicEvent {
	p.Payload = json.RawMessage(MaskDocumentsInJSON(p.Payload))
	return p
}

// Public is the event's shape in the events API.
func (e Event) Public() PublicEvent {
	return PublicEvent{ID: e.ID, Object: "event", Type: e.Type, Legacy: e.Type.Legacy(), Livemode: e.Mode == ModeLive,
		CreatedAt: Timestamp(e.CreatedAt), Payload: json.RawMessage(e.Payload)}
}

// ParseEventID reports whether s has the shape of an event id (evt_<raw>).
func ParseEventID(s string) bool {
	raw, ok := strings.CutPrefix(s, PrefixEvent)
	return ok && ValidRawID(raw)
}

// EventTypesMatching expands an events filter — exact catalog types, or a
// family wildcard such as "charge.*" — into the catalog types it names.
// ok is false for a name that matches nothing in the catalog.
func EventTypesMatching(name string) (types []EventType, ok bool) {
	prefix, wild := strings.CutSuffix(name, "*")
	for _, d := range EventCatalog {
		if (wild && strings.HasSuffix(prefix, ".") && strings.HasPrefix(string(d.Event), prefix)) || (!wild && string(d.Event) == name) {
			types = append(types, d.Event)
		}
	}
	return types, len(types) > 0
}
