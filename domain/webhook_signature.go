package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Webhook signatures.
//
// Canonical events (charge.*, payout.*) carry
//
//	X-Quita-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// and legacy events (payment.*, withdrawal.*) carry
//
//	X-Quita-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>
//
// The HMAC key is the secret string as shown to the merchant (64 hex
// characters), used as bytes, not hex-decoded.

// SignatureHeader is the header that carries a delivery's signature.
const SignatureHeader = "X-Quita-Signature"

// Other headers of every delivery.
const (
	DeliveryIDHeader = "X-Quita-Delivery-Id"
	EventTypeHeader  = "X-Quita-Event-Type"
)

// SignatureTolerance is how far a canonical signature's timestamp may be
// from the verifier's clock, either way.
const SignatureTolerance = 300 * time.Second

// WebhookSecretLen is the length of a webhook secret: 32 random bytes in
// lower-case hex.
const WebhookSecretLen = 64

var (
	// ErrSignatureMissing: the signature header is empty.
	ErrSignatureMissing = errors.New("webhook signature header is missing")
	// ErrSignatureMalformed: the header is neither "t=..,v1=.." nor
	// "sha256=..", or a part of it is not what it should be.
	ErrSignatureMalformed = errors.New("webhook signature header is malformed")
	// ErrSignatureTimestamp: the canonical timestamp is more than
	// SignatureTolerance away from now (a replay, or a skewed clock).
	ErrSignatureTimestamp = errors.New("webhook signature timestamp is outside the tolerance")
	// ErrSignatureMismatch: no signature in the header matches the body
	// under any of the secrets given.
	ErrSignatureMismatch = errors.New("webhook signature does not match")
	// ErrNoSecrets: VerifyWebhook was called without a secret.
	ErrNoSecrets = errors.New("webhook verification needs at least one secret")
	// ErrSignatureUntimestamped: VerifyCanonicalWebhook was given the
	// legacy "sha256=" scheme, which carries no timestamp, so a captured
	// delivery could be replayed at any time.
	ErrSignatureUntimestamped = errors.New("webhook signature has no timestamp (legacy sha256= scheme)")
)

// NewWebhookSecret reads 32 bytes from rnd (crypto/rand.Reader in
// production) and returns them as 64 lower-case hex characters.
func NewWebhookSecret(rnd io.Reader) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("read webhook secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func hmacHex(secret string, parts ...[]byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// SignCanonical returns the canonical header value "t=<unix>,v1=<hex>".
func SignCanonical(secret string, at time.Time, body []byte) string {
	t := strconv.FormatInt(at.Unix(), 10)
	return "t=" + t + ",v1=" + hmacHex(secret, []byte(t), []byte("."), body)
}

// SignLegacy returns the legacy header value "sha256=<hex>".
func SignLegacy(secret string, body []byte) string {
	return "sha256=" + hmacHex(secret, body)
}

// SignWebhook signs body in the scheme of the event's family.
func SignWebhook(t EventType, secret string, at time.Time, body []byte) string {
	if t.Legacy() {
		return SignLegacy(secret, body)
	}
	return SignCanonical(secret, at, body)
}

// ParsedSignature is a signature header taken apart.
type ParsedSignature struct {
	// Legacy is true for "sha256=<hex>".
	Legacy bool
	// Timestamp is the canonical t= value (zero for legacy).
	Timestamp time.Time
	// Signatures are the decoded MACs (every v1=, or the sha256= one).
	Signatures [][]byte
}

// ParseSignatureHeader splits a signature header. Canonical headers may
// carry several v1= values (and unknown schemes, which are ignored), in any
// order; exactly one t= is required.
func ParseSignatureHeader(header string) (ParsedSignature, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return ParsedSignature{}, ErrSignatureMissing
	}
	if len(header) > 4096 {
		return ParsedSignature{}, ErrSignatureMalformed
	}
	if rest, ok := strings.CutPrefix(header, "sha256="); ok {
		mac, err := decodeMAC(rest)
		if err != nil {
			return ParsedSignature{}, err
		}
		return ParsedSignature{Legacy: true, Signatures: [][]byte{mac}}, nil
	}
	var (
		p     ParsedSignature
		haveT bool
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ParsedSignature{}, ErrSignatureMalformed
		}
		switch k {
		case "t":
			if haveT || v == "" || len(v) > 12 {
				return ParsedSignature{}, ErrSignatureMalformed
			}
			sec, err := strconv.ParseInt(v, 10, 64)
			if err != nil || sec < 0 || strconv.FormatInt(sec, 10) != v {
				return ParsedSignature{}, ErrSignatureMalformed
			}
			p.Timestamp, haveT = time.Unix(sec, 0).UTC(), true
		case "v1":
			mac, err := decodeMAC(v)
			if err != nil {
				return ParsedSignature{}, err
			}
			p.Signatures = append(p.Signatures, mac)
		}
	}
	if !haveT || len(p.Signatures) == 0 {
		return ParsedSignature{}, ErrSignatureMalformed
	}
	return p, nil
}

func decodeMAC(s string) ([]byte, error) {
	if len(s) != 2*sha256.Size {
		return nil, ErrSignatureMalformed
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, ErrSignatureMalformed
	}
	return b, nil
}

// VerifyWebhook checks a delivery's X-Quita-Signature header against its
// raw body, for merchants to embed. It accepts either scheme and any of
// several secrets (during a rotation, pass the new and the old). MACs are
// compared in constant time. A canonical signature must be dated within
// SignatureTolerance of now; the legacy scheme carries no time, so it
// cannot be checked for replay, and the delivery id header is not signed:
// refuse it with VerifyCanonicalWebhook where the endpoint receives only
// canonical events.
//
// Errors: ErrNoSecrets, ErrSignatureMissing, ErrSignatureMalformed,
// ErrSignatureTimestamp, ErrSignatureMismatch.
func VerifyWebhook(header string, body []byte, now time.Time, secrets ...string) error {
	return verifyWebhook(header, body, now, false, secrets)
}

// VerifyCanonicalWebhook is VerifyWebhook that accepts only the canonical
// scheme, whose timestamp bounds a replay to SignatureTolerance: a legacy
// "sha256=" header is refused with ErrSignatureUntimestamped before any
// MAC is computed. Only charge.* and payout.* events are signed that way;
// an endpoint verified with it must not subscribe to payment.* or
// withdrawal.*, and a per-transaction webhookUrl (legacy events only)
// cannot use it.
//
// Errors: those of VerifyWebhook, and ErrSignatureUntimestamped.
func VerifyCanonicalWebhook(header string, body []byte, now time.Time, secrets ...string) error {
	return verifyWebhook(header, body, now, true, secrets)
}

func verifyWebhook(header string, body []byte, now time.Time, requireTimestamp bool, secrets []string) error {
	if len(secrets) == 0 {
		return ErrNoSecrets
	}
	p, err := ParseSignatureHeader(header)
	if err != nil {
		return err
	}
	if p.Legacy && requireTimestamp {
		return ErrSignatureUntimestamped
	}
	if !p.Legacy {
		d := now.Sub(p.Timestamp)
		if d > SignatureTolerance || d < -SignatureTolerance {
			return ErrSignatureTimestamp
		}
	}
	t := []byte(strconv.FormatInt(p.Timestamp.Unix(), 10))
	match := 0
	for _, s := range secrets {
		if s == "" {
			continue
		}
		m := hmac.New(sha256.New, []byte(s))
		if !p.Legacy {
			m.Write(t)
			m.Write([]byte("."))
		}
		m.Write(body)
		want := m.Sum(nil)
		for _, got := range p.Signatures {
			// Every pair is compared, so timing does not say which matched.
			if hmac.Equal(want, got) {
				match++
			}
		}
	}
	if match == 0 {
		return ErrSignatureMismatch
	}
	return nil
}
