package client

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of every webhook delivery.
const (
	// SignatureHeader carries "t=<unix>,v1=<hex>" (charge.*, payout.*) or
	// "sha256=<hex>" (legacy payment.*, withdrawal.*).
	SignatureHeader = "X-Quita-Signature"
	// DeliveryIDHeader is unique per delivery attempt.
	DeliveryIDHeader = "X-Quita-Delivery-Id"
	// EventTypeHeader mirrors the event's type.
	EventTypeHeader = "X-Quita-Event-Type"
)

// DefaultTolerance is how far a canonical signature's timestamp may be
// from the receiver's clock, either way.
const DefaultTolerance = 5 * time.Minute

// maxWebhookBody bounds the body ParseWebhook reads.
const maxWebhookBody = 1 << 20

// Errors of webhook verification. Answer a delivery that fails with any of
// them with 400: it is not from Quita, or was replayed.
var (
	// ErrSignatureMissing: the request has no signature header.
	ErrSignatureMissing = errors.New("quita webhook: signature header is missing")
	// ErrSignatureMalformed: the header is neither "t=..,v1=.." nor
	// "sha256=..".
	ErrSignatureMalformed = errors.New("quita webhook: signature header is malformed")
	// ErrSignatureTimestamp: the canonical timestamp is outside the
	// tolerance (a replay, or a skewed clock).
	ErrSignatureTimestamp = errors.New("quita webhook: signature timestamp is outside the tolerance")
	// ErrSignatureMismatch: no signature matches the body under any secret.
	ErrSignatureMismatch = errors.New("quita webhook: signature does not match")
	// ErrNoSecrets: verification was asked without a secret.
	ErrNoSecrets = errors.New("quita webhook: verification needs at least one secret")
	// ErrBodyTooLarge: the body is over 1 MiB, far more than any event.
	ErrBodyTooLarge = errors.New("quita webhook: body is larger than 1 MiB")
	// ErrSignatureUntimestamped: the header is the legacy "sha256="
	// scheme, which carries no time and so can be replayed at any time,
	// and the verifier has RequireTimestamp set.
	ErrSignatureUntimestamped = errors.New("quita webhook: signature has no timestamp (legacy sha256= scheme)")
)

// WebhookVerifier checks deliveries. The zero value needs Secrets.
type WebhookVerifier struct {
	// Secrets are the endpoint's secrets: during a rotation the new one
	// and the old one (the server swaps at once), afterwards just one.
	// A delivery signed with any of them is accepted.
	Secrets []string
	// Tolerance bounds the age of a canonical signature (default
	// DefaultTolerance). Legacy signatures carry no time, and
	// DeliveryIDHeader is not signed, so neither bounds a replay of a
	// legacy delivery: refuse them with RequireTimestamp, or act on a
	// legacy event only after reading the payment back from the API.
	Tolerance time.Duration
	// RequireTimestamp refuses the legacy "sha256=" scheme with
	// ErrSignatureUntimestamped, before any MAC is computed, so that
	// every accepted delivery was signed within Tolerance: a captured
	// request cannot be replayed later. Recommended for endpoints that
	// subscribe only to charge.* and payout.* (the canonical events);
	// legacy payment.* and withdrawal.* events, and every delivery to a
	// per-transaction webhookUrl, are signed with the legacy scheme only
	// and would all be refused.
	RequireTimestamp bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// VerifySignature checks header against the raw body under any of
// secrets, with DefaultTolerance and the wall clock. It accepts both
// schemes and compares in constant time.
func VerifySignature(header string, body []byte, secrets ...string) error {
	return WebhookVerifier{Secrets: secrets}.Verify(header, body)
}

// ParseWebhook verifies a delivery and decodes its body: the one call a
// webhook handler needs. It reads r.Body (at most 1 MiB). It accepts both
// schemes; an endpoint that subscribes only to charge.* and payout.*
// should use WebhookVerifier{Secrets: ..., RequireTimestamp: true}.Parse
// instead, which refuses the legacy scheme's replayable signatures.
//
//	func hooks(w http.ResponseWriter, r *http.Request) {
//		ev, err := client.ParseWebhook(r, secret, oldSecret)
//		if err != nil {
//			http.Error(w, "bad signature", http.StatusBadRequest)
//			return
//		}
//		... // dedupe by ev.ID, then act on ev.Type
//	}
func ParseWebhook(r *http.Request, secrets ...string) (*Event, error) {
	return WebhookVerifier{Secrets: secrets}.Parse(r)
}

// Parse verifies r and decodes its event; see ParseWebhook.
func (v WebhookVerifier) Parse(r *http.Request) (*Event, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil {
		return nil, fmt.Errorf("quita webhook: read body: %w", err)
	}
	if len(body) > maxWebhookBody {
		return nil, ErrBodyTooLarge
	}
	if err := v.Verify(r.Header.Get(SignatureHeader), body); err != nil {
		return nil, err
	}
	ev, err := ParseEvent(body)
	if err != nil {
		return nil, err
	}
	ev.DeliveryID = r.Header.Get(DeliveryIDHeader)
	return ev, nil
}

// Verify checks a signature header against the raw body.
func (v WebhookVerifier) Verify(header string, body []byte) error {
	if len(v.Secrets) == 0 {
		return ErrNoSecrets
	}
	sig, err := parseSignature(header)
	if err != nil {
		return err
	}
	if sig.legacy && v.RequireTimestamp {
		return ErrSignatureUntimestamped
	}
	if !sig.legacy {
		now, tol := time.Now(), v.Tolerance
		if v.Now != nil {
			now = v.Now()
		}
		if tol <= 0 {
			tol = DefaultTolerance
		}
		if d := now.Sub(time.Unix(sig.t, 0)); d > tol || d < -tol {
			return ErrSignatureTimestamp
		}
	}
	match := false
	for _, secret := range v.Secrets {
		if secret == "" {
			continue
		}
		m := hmac.New(sha256.New, []byte(secret))
		if !sig.legacy {
			m.Write([]byte(strconv.FormatInt(sig.t, 10) + "."))
		}
		m.Write(body)
		want := m.Sum(nil)
		for _, got := range sig.macs {
			// Every pair is compared: timing does not tell which matched.
			if hmac.Equal(want, got) {
				match = true
			}
		}
	}
	if !match {
		return ErrSignatureMismatch
	}
	return nil
}

type signature struct {
	legacy bool
	t      int64
	macs   [][]byte
}

// parseSignature splits "sha256=<hex>" or "t=<unix>,v1=<hex>[,v1=...]";
// a canonical header needs exactly one t= and at least one v1=, and
// other schemes in it are ignored.
func parseSignature(h string) (signature, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return signature{}, ErrSignatureMissing
	}
	if len(h) > 4096 {
		return signature{}, ErrSignatureMalformed
	}
	if rest, ok := strings.CutPrefix(h, "sha256="); ok {
		mac, err := decodeHexMAC(rest)
		if err != nil {
			return signature{}, err
		}
		return signature{legacy: true, macs: [][]byte{mac}}, nil
	}
	var (
		s     signature
		haveT bool
	)
	for part := range strings.SplitSeq(h, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return signature{}, ErrSignatureMalformed
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(val, 10, 64)
			if haveT || len(val) > 12 || err != nil || n < 0 || strconv.FormatInt(n, 10) != val {
				return signature{}, ErrSignatureMalformed
			}
			s.t, haveT = n, true
		case "v1":
			mac, err := decodeHexMAC(val)
			if err != nil {
				return signature{}, err
			}
			s.macs = append(s.macs, mac)
		}
	}
	if !haveT || len(s.macs) == 0 {
		return signature{}, ErrSignatureMalformed
	}
	return s, nil
}

func decodeHexMAC(s string) ([]byte, error) {
	if len(s) != 2*sha256.Size {
		return nil, ErrSignatureMalformed
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, ErrSignatureMalformed
	}
	return b, nil
}

// Event is a webhook's body, in either envelope. Canonical events
// (charge.*, payout.*) fill ID, Object, APIVersion, CreatedAt and Data;
// legacy events (payment.*, withdrawal.*) fill Legacy. Type is set for
// both.
type Event struct {
	// ID is "evt_...", identical across retries of the same event: dedupe
	// by it. A legacy envelope has none: from a webhook it is empty
	// (dedupe by DeliveryID); from the events API it is the event's id.
	ID         string    `json:"id"`
	Object     string    `json:"object"`
	APIVersion string    `json:"api_version"`
	Type       string    `json:"type"`
	CreatedAt  time.Time `json:"created_at"`
	Data       struct {
		// Object is the charge (or payout) as the API shows it; decode
		// it with Charge.
		Object json.RawMessage `json:"object"`
	} `json:"data"`
	// Legacy is the data of a legacy envelope, nil for canonical events.
	Legacy *LegacyData `json:"-"`
	// DeliveryID is the delivery attempt's id (from ParseWebhook).
	DeliveryID string `json:"-"`
	// Livemode is set by the events API (false for test mode).
	Livemode bool `json:"-"`
	// Raw is the body as received.
	Raw json.RawMessage `json:"-"`
}

// LegacyData is the data of a legacy event.
type LegacyData struct {
	// TransactionID is "tx_..." (the payment's id).
	TransactionID string `json:"transactionId"`
	// CustomerID is the payment's customerId, when it had one.
	CustomerID     string    `json:"customerId,omitempty"`
	Amount         int64     `json:"amount"`
	Status         TxStatus  `json:"status"`
	PreviousStatus *TxStatus `json:"previousStatus"`
	// PaidWith and the fees are set on PAID and APPROVED.
	PaidWith    *string `json:"paidWith,omitempty"`
	ProviderFee *int64  `json:"providerFee,omitempty"`
	PlatformFee *int64  `json:"platformFee,omitempty"`
	NetAmount   *int64  `json:"netAmount,omitempty"`
	// Refund fields are set on payment.refunded.
	RefundID     string `json:"refundId,omitempty"`
	RefundStatus string `json:"refundStatus,omitempty"`
	RefundAmount *int64 `json:"refundAmount,omitempty"`
	// RefundStrategy is how the refund travels (devolution, cashout);
	// RefundDestinationKey the key a cashout goes to, masked, with its
	// type; RefundFee the Pix-out fee it bore.
	RefundStrategy           string    `json:"refundStrategy,omitempty"`
	RefundDestinationKey     string    `json:"refundDestinationKey,omitempty"`
	RefundDestinationKeyType string    `json:"refundDestinationKeyType,omitempty"`
	RefundFee                *int64    `json:"refundFee,omitempty"`
	OccurredAt               time.Time `json:"occurredAt"`
}

// IsLegacy reports whether the event came in the legacy envelope.
func (e *Event) IsLegacy() bool { return e.Legacy != nil }

// Charge decodes the charge of a charge.* event.
func (e *Event) Charge() (*Charge, error) {
	var ch Charge
	if err := decodeObject(e, "charge", &ch); err != nil {
		return nil, err
	}
	return &ch, nil
}

func decodeObject(e *Event, kind string, v any) error {
	if e.IsLegacy() || len(e.Data.Object) == 0 {
		return fmt.Errorf("quita webhook: %s event has no data.object", e.Type)
	}
	var head struct {
		Object string `json:"object"`
	}
	if err := json.Unmarshal(e.Data.Object, &head); err != nil {
		return fmt.Errorf("quita webhook: decode data.object: %w", err)
	}
	if head.Object != kind {
		return fmt.Errorf("quita webhook: %s event carries a %q, not a %s", e.Type, head.Object, kind)
	}
	dec := json.NewDecoder(bytes.NewReader(e.Data.Object))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("quita webhook: decode %s: %w", kind, err)
	}
	return nil
}

// ParseEvent decodes an event body without verifying it: for a payload
// from a source you already trust (the deliveries list). Webhook
// handlers use ParseWebhook.
func ParseEvent(body []byte) (*Event, error) {
	var probe struct {
		Event string          `json:"event"`
		Type  string          `json:"type"`
		Data  json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, fmt.Errorf("quita webhook: decode event: %w", err)
	}
	ev := &Event{Raw: append(json.RawMessage(nil), body...)}
	switch {
	case probe.Type != "":
		if err := json.Unmarshal(body, ev); err != nil {
			return nil, fmt.Errorf("quita webhook: decode %s event: %w", probe.Type, err)
		}
	case probe.Event != "":
		var d LegacyData
		if err := json.Unmarshal(probe.Data, &d); err != nil {
			return nil, fmt.Errorf("quita webhook: decode %s event: %w", probe.Event, err)
		}
		ev.Type, ev.Legacy = probe.Event, &d
	default:
		return nil, errors.New("quita webhook: body is neither a canonical nor a legacy event")
	}
	return ev, nil
}
