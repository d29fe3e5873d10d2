package domain_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// eventIDs returns a newID func that hands out distinct raw ids.
func eventIDs() func() (string, error) {
	n := 0
	return func() (string, error) {
		n++
		return fmt.Sprintf("rawevent%018d", n), nil
	}
}

func eventKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func eventSorted(keys ...string) []string {
	out := slices.Clone(keys)
	slices.Sort(out)
	return out
}

func TestNewChargeEventsCanonicalEnvelope(t *testing.T) {
	t.Parallel()
	c := chargeOpen(t, "")
	if _, err := c.SettlePix(chargePayment(chargeCPF), chargePixFees); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 9, 10, 11, 123_456_789, time.FixedZone("BRT", -3*60*60))
	evs, err := domain.NewChargeEvents(c, domain.TxWaitingPayment, []domain.EventType{domain.EventChargePaid}, chargeLinks, eventIDs(), now)
	if err != nil || len(evs) != 1 {
		t.Fatalf("NewChargeEvents = %d events, %v", len(evs), err)
	}
	ev := evs[0]
	if ev.ID != "evt_rawevent000000000000000001" || ev.Type != domain.EventChargePaid || ev.AccountID != "acct_1" ||
		ev.Mode != domain.ModeTest || ev.ChargeID != chargeRawID {
		t.Errorf("event = %+v", ev)
	}
	if !ev.CreatedAt.Equal(now) || ev.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", ev.CreatedAt, now)
	}

	if got, want := eventKeys(t, ev.Payload), eventSorted("id", "object", "api_version", "type", "created_at", "data"); !slices.Equal(got, want) {
		t.Errorf("envelope keys = %v, want %v", got, want)
	}
	var env struct {
		ID         string          `json:"id"`
		Object     string          `json:"object"`
		APIVersion string          `json:"api_version"`
		Type       string          `json:"type"`
		CreatedAt  string          `json:"created_at"`
		Data       json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(ev.Payload, &env); err != nil {
		t.Fatal(err)
	}
	if env.ID != ev.ID || !strings.HasPrefix(env.ID, "evt_") {
		t.Errorf("id = %q, want the event id %q", env.ID, ev.ID)
	}
	if env.Object != "event" || env.Type != "charge.paid" {
		t.Errorf("object %q type %q", env.Object, env.Type)
	}
	if _, err := time.Parse(time.DateOnly, env.APIVersion); err != nil || !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(env.APIVersion) {
		t.Errorf("api_version = %q, want YYYY-MM-DD", env.APIVersion)
	}
	if env.CreatedAt != "2026-11-22T12:10:11.123Z" {
		t.Errorf("created_at = %q, want 2026-11-22T12:10:11.123Z", env.CreatedAt)
	}
	if got := eventKeys(t, env.Data); !slices.Equal(got, []string{"object"}) {
		t.Errorf("data keys = %v, want [object]", got)
	}

	// data.object is the same public charge the REST API returns.
	var data struct {
		Object map[string]any `json:"object"`
	}
	if err := json.Unmarshal(env.Data, &data); err != nil {
		t.Fatal(err)
	}
	restJSON, err := json.Marshal(c.Public(chargeLinks))
	if err != nil {
		t.Fatal(err)
	}
	var rest map[string]any
	if err := json.Unmarshal(restJSON, &rest); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(data.Object, rest) {
		t.Errorf("data.object = %v\nREST charge = %v", data.Object, rest)
	}
	if data.Object["status"] != "paid" || data.Object["id"] != "ch_"+chargeRawID {
		t.Errorf("data.object status %v id %v", data.Object["status"], data.Object["id"])
	}
}

func TestNewChargeEventsLegacyEnvelope(t *testing.T) {
	t.Parallel()
	base := []string{"transactionId", "amount", "status", "previousStatus", "occurredAt"}
	withFees := append(slices.Clone(base), "paidWith", "providerFee", "platformFee", "netAmount")
	settle := func(lock, payer string) func(t *testing.T) *domain.Charge {
		return func(t *testing.T) *domain.Charge {
			c := chargeOpen(t, lock)
			if _, err := c.SettlePix(chargePayment(payer), chargePixFees); err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	tests := []struct {
		name       string
		charge     func(t *testing.T) *domain.Charge
		prev       domain.TxStatus
		event      domain.EventType
		wantKeys   []string
		wantStatus string
		wantPrev   any
		wantFees   map[string]any
	}{
		{"created", func(t *testing.T) *domain.Charge { return chargeOpen(t, "") }, "",
			domain.EventPaymentCreated, base, "WAITING_PAYMENT", nil, nil},
		{"completed", settle("", chargeCPF), domain.TxWaitingPayment,
			domain.EventPaymentCompleted, withFees, "PAID", "WAITING_PAYMENT",
			map[string]any{"paidWith": "PIX", "providerFee": 50.0, "platformFee": 49.0, "netAmount": 9901.0}},
		{"status changed to PAID", settle(chargeCPF, chargeCPF), domain.TxWaitingPayment,
			domain.EventPaymentStatusChanged, withFees, "PAID", "WAITING_PAYMENT",
			map[string]any{"paidWith": "PIX", "providerFee": 50.0, "platformFee": 49.0, "netAmount": 9901.0}},
		{"card approved", func(*testing.T) *domain.Charge {
			s := chargeInStatus(domain.TxApproved).Snapshot()
			s.Methods = []domain.Method{domain.MethodCreditCard}
			s.Settlement = &domain.Settlement{Amount: chargeAmount, PaidAt: chargeT0, PaidWith: domain.MethodCreditCard}
			s.Fees = domain.Fees{Provider: 388, Platform: 299}
			return domain.UnmarshalChargeFromStorage(s)
		}, domain.TxProcessing, domain.EventPaymentCompleted, withFees, "APPROVED", "PROCESSING",
			map[string]any{"paidWith": "CREDIT_CARD", "providerFee": 388.0, "platformFee": 299.0, "netAmount": 9313.0}},
		{"held for review", settle(chargeCPF, ""), domain.TxWaitingPayment,
			domain.EventPaymentStatusChanged, base, "PROCESSING", "WAITING_PAYMENT", nil},
		{"payer mismatch held", settle(chargeCPF, chargeCPF2), domain.TxWaitingPayment,
			domain.EventPaymentStatusChanged, base, "PROCESSING", "WAITING_PAYMENT", nil},
		{"payer mismatch returned", func(t *testing.T) *domain.Charge {
			c := settle(chargeCPF, chargeCPF2)(t)
			if err := c.ConfirmReturn(chargeT0.Add(20 * time.Minute)); err != nil {
				t.Fatal(err)
			}
			return c
		}, domain.TxProcessing, domain.EventPaymentRefunded, base, "REFUNDED", "PROCESSING", nil},
		{"expired", func(t *testing.T) *domain.Charge {
			c := chargeOpen(t, "")
			if err := c.Expire(chargeT0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			return c
		}, domain.TxWaitingPayment, domain.EventPaymentFailed, base, "EXPIRED", "WAITING_PAYMENT", nil},
		{"refunded after payment", func(*testing.T) *domain.Charge {
			s := chargeInStatus(domain.TxRefunded).Snapshot()
			s.Settlement = &domain.Settlement{EndToEndID: chargeE2E, Amount: chargeAmount, PaidAt: chargeT0, PaidWith: domain.MethodPix}
			s.Fees = domain.Fees{Provider: 50, Platform: 49}
			return domain.UnmarshalChargeFromStorage(s)
		}, domain.TxPaid, domain.EventPaymentRefunded, base, "REFUNDED", "PAID", nil},
		{"customerId echoed", func(t *testing.T) *domain.Charge {
			c := chargeNew(t, func(p *domain.NewChargeParams) { p.CustomerRef = "user-7" })
			if err := c.Cancel(chargeT0); err != nil {
				t.Fatal(err)
			}
			return c
		}, domain.TxPending, domain.EventPaymentFailed, append(slices.Clone(base), "customerId"), "CANCELLED", "PENDING", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.charge(t)
			now := chargeT0.Add(30*time.Minute + 5*time.Millisecond)
			evs, err := domain.NewChargeEvents(c, tt.prev, []domain.EventType{tt.event}, chargeLinks, eventIDs(), now)
			if err != nil || len(evs) != 1 {
				t.Fatalf("NewChargeEvents = %d events, %v", len(evs), err)
			}
			ev := evs[0]
			if ev.Type != tt.event || !strings.HasPrefix(ev.ID, "evt_") {
				t.Errorf("event type %s id %q", ev.Type, ev.ID)
			}
			if got := eventKeys(t, ev.Payload); !slices.Equal(got, []string{"data", "event"}) {
				t.Errorf("envelope keys = %v, want [data event]", got)
			}
			var env struct {
				Event string          `json:"event"`
				Data  json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(ev.Payload, &env); err != nil {
				t.Fatal(err)
			}
			if env.Event != string(tt.event) {
				t.Errorf("event = %q, want %q", env.Event, tt.event)
			}
			if got, want := eventKeys(t, env.Data), eventSorted(tt.wantKeys...); !slices.Equal(got, want) {
				t.Errorf("data keys = %v, want %v", got, want)
			}
			var data map[string]any
			if err := json.Unmarshal(env.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data["transactionId"] != "tx_"+chargeRawID {
				t.Errorf("transactionId = %v, want tx_%s", data["transactionId"], chargeRawID)
			}
			if data["amount"] != float64(chargeAmount) {
				t.Errorf("amount = %v, want %d", data["amount"], chargeAmount)
			}
			if data["status"] != tt.wantStatus || data["previousStatus"] != tt.wantPrev {
				t.Errorf("status %v previousStatus %v, want %v %v", data["status"], data["previousStatus"], tt.wantStatus, tt.wantPrev)
			}
			if data["occurredAt"] != "2026-11-22T12:30:00.005Z" {
				t.Errorf("occurredAt = %v, want 2026-11-22T12:30:00.005Z", data["occurredAt"])
			}
			for k, want := range tt.wantFees {
				if data[k] != want {
					t.Errorf("%s = %v, want %v", k, data[k], want)
				}
			}
			if tt.wantFees != nil {
				net := data["amount"].(float64) - data["providerFee"].(float64) - data["platformFee"].(float64)
				if data["netAmount"] != net {
					t.Errorf("netAmount = %v, want amount − providerFee − platformFee = %v", data["netAmount"], net)
				}
			}
		})
	}
}

func TestNewChargeEventsOnePerTypeWithDistinctIDs(t *testing.T) {
	t.Parallel()
	c := chargeOpen(t, "")
	types := []domain.EventType{domain.EventChargeCreated, domain.EventPaymentCreated}
	evs, err := domain.NewChargeEvents(c, "", types, chargeLinks, eventIDs(), chargeT0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Type != types[0] || evs[1].Type != types[1] {
		t.Fatalf("events = %+v, want one per type in order", evs)
	}
	if evs[0].ID == evs[1].ID {
		t.Errorf("both events have id %q", evs[0].ID)
	}
	if !strings.Contains(string(evs[0].Payload), `"id":"`+evs[0].ID+`"`) {
		t.Errorf("canonical payload does not carry its event id %q: %s", evs[0].ID, evs[0].Payload)
	}

	none, err := domain.NewChargeEvents(c, domain.TxPending, nil, chargeLinks, eventIDs(), chargeT0)
	if err != nil || len(none) != 0 {
		t.Errorf("no types = %v, %v; want no events", none, err)
	}
}

func TestNewChargeEventsIDError(t *testing.T) {
	t.Parallel()
	boom := errors.New("entropy exhausted")
	c := chargeOpen(t, "")
	evs, err := domain.NewChargeEvents(c, "", domain.CreationEvents(), chargeLinks, func() (string, error) { return "", boom }, chargeT0)
	if !errors.Is(err, boom) || evs != nil {
		t.Errorf("NewChargeEvents = %v, %v; want nil, %v", evs, err, boom)
	}
}

// A canonical event's data.object, read back from its payload, is the
// charge's public object byte for byte as json.Marshal encodes it — what a
// create answers (app.AnswerPublic) — even when the charge's own text looks
// like the envelope around it; a legacy event has none.
func TestEventCanonicalObject(t *testing.T) {
	t.Parallel()
	charges := map[string]*domain.Charge{
		"plain": chargeNew(t, nil),
		"text like the envelope": chargeNew(t, func(p *domain.NewChargeParams) {
			p.Description = `"data":{"object": <b>&</b> }}`
			p.Metadata = map[string]any{"data": map[string]any{"object": `}}"data":{"object":`}, "pedido": "ção"}
		}),
		"locked to a payer": chargeOpen(t, chargeCPF),
	}
	for name, c := range charges {
		want, err := json.Marshal(c.Public(chargeLinks))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := domain.NewChargeEvents(c, "", domain.CreationEvents(), chargeLinks, eventIDs(), chargeT0)
		if err != nil {
			t.Fatal(err)
		}
		canonical := 0
		for _, ev := range evs {
			got, ok := ev.CanonicalObject()
			if ev.Type.Legacy() {
				if ok {
					t.Errorf("%s: %s has a canonical object: %s", name, ev.Type, got)
				}
				continue
			}
			canonical++
			if !ok || string(got) != string(want) {
				t.Errorf("%s: %s's object = %s, %v; want %s", name, ev.Type, got, ok, want)
			}
			if cap(got) != len(got) {
				t.Errorf("%s: the object can grow into its payload (cap %d, len %d)", name, cap(got), len(got))
			}
			if !domain.EnvelopeEndsWithObject(ev.Payload, want) {
				t.Errorf("%s: %s's payload does not end with its object", name, ev.Type)
			}
			if domain.EnvelopeEndsWithObject(ev.Payload, want[1:]) || domain.EnvelopeEndsWithObject(ev.Payload, nil) {
				t.Errorf("%s: %s's payload ends with a part of its object, or with none", name, ev.Type)
			}
		}
		if canonical != 1 {
			t.Errorf("%s: %d canonical creation events, want 1", name, canonical)
		}
	}
	if got, ok := (domain.Event{Type: domain.EventChargeCreated, Payload: []byte(`{"id":"evt_1"}`)}).CanonicalObject(); ok {
		t.Errorf("a payload without data.object: %s, ok", got)
	}
}

// The events API's event is its delivered envelope, member for member and
// in order, with the API's members the envelope lacks and the envelope
// whole as payload: a canonical envelope keeps its own id, object, type and
// created_at; a legacy one gets the API's.
func TestPublicEventIsTheEnvelopeWithTheAPIMembers(t *testing.T) {
	t.Parallel()
	c := chargeOpen(t, chargeCPF)
	if _, err := c.SettlePix(chargePayment(chargeCPF), chargePixFees); err != nil {
		t.Fatal(err)
	}
	evs, err := domain.NewChargeEvents(c, domain.TxWaitingPayment, []domain.EventType{domain.EventChargePaid, domain.EventPaymentCompleted},
		chargeLinks, eventIDs(), chargeT0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		ev.Mode = domain.ModeLive
		for name, pub := range map[string]domain.PublicEvent{"event": ev.Public(), "list item": ev.Public().Masked()} {
			got, err := json.Marshal(pub)
			if err != nil {
				t.Fatal(err)
			}
			var api string
			if ev.Type.Legacy() {
				api = `"id":"` + ev.ID + `","object":"event","type":"` + string(ev.Type) + `","legacy":true,"livemode":true,"created_at":"` +
					chargeT0.UTC().Format(domain.TimestampLayout) + `",`
			} else {
				api = `"legacy":false,"livemode":true,`
			}
			payload := string(pub.Payload)
			want := payload[:len(payload)-1] + "," + api + `"payload":` + payload + "}"
			if string(got) != want {
				t.Errorf("%s %s:\n got %s\nwant %s", ev.Type, name, got, want)
			}
			var back domain.PublicEvent
			if err := json.Unmarshal(got, &back); err != nil || back.ID != ev.ID || back.Type != ev.Type || !back.Livemode ||
				back.Legacy != ev.Type.Legacy() || string(back.Payload) != payload {
				t.Errorf("%s %s read back as %+v (%v)", ev.Type, name, back, err)
			}
		}
	}
	for _, payload := range []string{`{}`, ` { } `} {
		got, err := json.Marshal(domain.Event{ID: "evt_1", Type: domain.EventChargePaid, Payload: []byte(payload)}.Public())
		if want := `{"id":"evt_1","object":"event","type":"charge.paid","legacy":false,"livemode":false,"created_at":"0001-01-01T00:00:00.000Z","payload":{}}`; err != nil || string(got) != want {
			t.Errorf("payload %q: %s (%v), want %s", payload, got, err, want)
		}
	}
}
