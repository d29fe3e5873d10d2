package store

import (
	"bytes"
	"testing"
)

// pointAnswer moves the answer into an event only when the event's
// envelope ends with exactly `"data":{"object":<answer>}}`, and answerOf
// reads back what it moved.
func TestPointAnswerOnlyOnAnExactEnding(t *testing.T) {
	answer := []byte(`{"id":"ch_1","amount":1990}`)
	envelope := func(object string) []byte {
		return []byte(`{"id":"evt_1","object":"event","type":"charge.created","data":{"object":` + object + `}}`)
	}
	cases := []struct {
		name    string
		payload []byte
		moved   bool
	}{
		{"the envelope's object", envelope(string(answer)), true},
		{"another object", envelope(`{"id":"ch_2","amount":1990}`), false},
		{"the answer inside the object", envelope(`{"charge":` + string(answer) + `}`), false},
		{"the answer not under data.object", []byte(`{"id":"evt_1","data":{"other":` + string(answer) + `}}`), false},
		{"a legacy envelope", []byte(`{"event":"payment.created","data":{"transactionId":"tx_1"}}`), false},
		{"shorter than the answer", []byte(`}}`), false},
		{"empty", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := chargeCreate{
				idem: &idempotencyRow{Key: "k-1", Body: bytes.Clone(answer)},
				evs:  []eventRow{{ID: "evt_legacy", Payload: []byte(`{"event":"payment.created","data":{}}`)}, {ID: "evt_1", Payload: tc.payload}},
			}
			c.pointAnswer("evt_1")
			if !tc.moved {
				if c.idem.BodyEvent != nil || !bytes.Equal(c.idem.Body, answer) || c.evs[0].AnswersKey != nil || c.evs[1].AnswersKey != nil {
					t.Fatalf("moved: record names %v, keeps %q", c.idem.BodyEvent, c.idem.Body)
				}
				return
			}
			if c.idem.BodyEvent == nil || *c.idem.BodyEvent != "evt_1" || len(c.idem.Body) != 0 || c.idem.Body == nil {
				t.Fatalf("record names %v and keeps %q, want evt_1 and an empty (not NULL) body", c.idem.BodyEvent, c.idem.Body)
			}
			if c.evs[0].AnswersKey != nil || c.evs[1].AnswersKey == nil || *c.evs[1].AnswersKey != "k-1" {
				t.Fatalf("events answer %v and %v, want only evt_1 for k-1", c.evs[0].AnswersKey, c.evs[1].AnswersKey)
			}
			row := &idempotencyRow{Body: tc.payload, InEvent: true}
			if err := row.resolve(); err != nil || !bytes.Equal(row.Body, answer) {
				t.Fatalf("read back %q (err %v), want %q", row.Body, err, answer)
			}
		})
	}
	// The answer goes only to the event the write named.
	named := chargeCreate{idem: &idempotencyRow{Key: "k-2", Body: bytes.Clone(answer)},
		evs: []eventRow{{ID: "evt_1", Payload: envelope(string(answer))}}}
	named.pointAnswer("evt_other")
	if named.idem.BodyEvent != nil || named.evs[0].AnswersKey != nil {
		t.Errorf("the answer moved to %v, an event the write did not name", named.idem.BodyEvent)
	}
	// A record without an answer, or without a record, moves nothing.
	for _, c := range []chargeCreate{{evs: []eventRow{{Payload: envelope("{}")}}}, {idem: &idempotencyRow{Body: []byte{}}, evs: []eventRow{{Payload: envelope("")}}}} {
		c.pointAnswer("")
		if c.evs[0].AnswersKey != nil {
			t.Errorf("an empty answer was pointed at %s", c.evs[0].Payload)
		}
	}
}

func TestResolveRefusesWhatHoldsNoAnswer(t *testing.T) {
	for name, payload := range map[string][]byte{
		"the event gone": nil,
		"not JSON":       []byte(`{"data":{"object":`),
		"no data.object": []byte(`{"event":"payment.created","data":{}}`),
	} {
		row := &idempotencyRow{Body: payload, InEvent: true}
		if err := row.resolve(); err == nil {
			t.Errorf("%s: resolved to %q, want an error", name, row.Body)
		}
	}
	row := &idempotencyRow{Body: []byte(`{"id":"ch_1"}`)}
	if err := row.resolve(); err != nil || string(row.Body) != `{"id":"ch_1"}` {
		t.Errorf("a body of its own resolved to %q (err %v)", row.Body, err)
	}
}
