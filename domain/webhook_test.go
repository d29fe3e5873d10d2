package domain_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

type signatureVector struct {
	Name      string   `json:"name"`
	Scheme    string   `json:"scheme"`
	Secret    string   `json:"secret"`
	Timestamp int64    `json:"timestamp"`
	Body      string   `json:"body"`
	Header    string   `json:"header"`
	VerifyAt  int64    `json:"verify_at"`
	Secrets   []string `json:"verify_secrets"`
	Valid     bool     `json:"valid"`
	Error     string   `json:"error"`
}

var vectorErrors = map[string]error{
	"missing":   domain.ErrSignatureMissing,
	"malformed": domain.ErrSignatureMalformed,
	"timestamp": domain.ErrSignatureTimestamp,
	"mismatch":  domain.ErrSignatureMismatch,
}

// TestWebhookSignatureVectors checks the golden vectors every SDK shares.
func TestWebhookSignatureVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../testdata/webhook-signature-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tolerance int64             `json:"tolerance_seconds"`
		Vectors   []signatureVector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if time.Duration(file.Tolerance)*time.Second != domain.SignatureTolerance {
		t.Fatalf("vector tolerance %d s, domain %s", file.Tolerance, domain.SignatureTolerance)
	}
	if len(file.Vectors) < 10 {
		t.Fatalf("only %d vectors", len(file.Vectors))
	}
	for _, v := range file.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			err := domain.VerifyWebhook(v.Header, []byte(v.Body), time.Unix(v.VerifyAt, 0), v.Secrets...)
			if v.Valid {
				if err != nil {
					t.Fatalf("valid vector rejected: %v", err)
				}
			} else if want := vectorErrors[v.Error]; !errors.Is(err, want) {
				t.Fatalf("got %v, want %v", err, want)
			}
			// Signing reproduces the header of the plain vectors.
			if v.Valid && v.Secret != "" && len(v.Secrets) == 1 && v.Secrets[0] == v.Secret &&
				strings.Count(v.Header, "=") <= 2 && strings.ToLower(v.Header) == v.Header {
				var got string
				if v.Scheme == "legacy" {
					got = domain.SignLegacy(v.Secret, []byte(v.Body))
				} else {
					got = domain.SignCanonical(v.Secret, time.Unix(v.Timestamp, 0), []byte(v.Body))
				}
				if got != v.Header {
					t.Fatalf("sign: got %s, want %s", got, v.Header)
				}
			}
		})
	}
}

func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	body := []byte(`{"id":"evt_1"}`)
	const s1, s2 = "secret-one", "secret-two"
	tests := []struct {
		name    string
		header  string
		secrets []string
		want    error
	}{
		{"canonical", domain.SignCanonical(s1, now, body), []string{s1}, nil},
		{"canonical second secret", domain.SignCanonical(s2, now, body), []string{s1, s2}, nil},
		{"legacy", domain.SignLegacy(s1, body), []string{s1}, nil},
		{"no secrets", domain.SignLegacy(s1, body), nil, domain.ErrNoSecrets},
		{"empty secret only", domain.SignLegacy(s1, body), []string{""}, domain.ErrSignatureMismatch},
		{"stale", domain.SignCanonical(s1, now.Add(-301*time.Second), body), []string{s1}, domain.ErrSignatureTimestamp},
		{"future", domain.SignCanonical(s1, now.Add(301*time.Second), body), []string{s1}, domain.ErrSignatureTimestamp},
		{"wrong secret", domain.SignCanonical(s1, now, body), []string{s2}, domain.ErrSignatureMismatch},
		{"blank", "  ", []string{s1}, domain.ErrSignatureMissing},
		{"garbage", "hello", []string{s1}, domain.ErrSignatureMalformed},
		{"two t", "t=1,t=2,v1=" + strings.Repeat("0", 64), []string{s1}, domain.ErrSignatureMalformed},
		{"no v1", "t=1", []string{s1}, domain.ErrSignatureMalformed},
		{"bad hex", "sha256=" + strings.Repeat("z", 64), []string{s1}, domain.ErrSignatureMalformed},
		{"negative t", "t=-5,v1=" + strings.Repeat("0", 64), []string{s1}, domain.ErrSignatureMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := domain.VerifyWebhook(tt.header, body, now, tt.secrets...); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestVerifyCanonicalWebhook: the strict verifier refuses every legacy
// header, valid or not, as untimestamped, and otherwise decides as
// VerifyWebhook does.
func TestVerifyCanonicalWebhook(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	body := []byte(`{"event":"payment.completed","data":{}}`)
	const s1, s2 = "secret-one", "secret-two"
	tests := []struct {
		name    string
		header  string
		secrets []string
		want    error
	}{
		{"canonical", domain.SignCanonical(s1, now, body), []string{s1}, nil},
		{"canonical second secret", domain.SignCanonical(s2, now, body), []string{s1, s2}, nil},
		{"legacy, valid", domain.SignLegacy(s1, body), []string{s1}, domain.ErrSignatureUntimestamped},
		{"legacy, second secret", domain.SignLegacy(s2, body), []string{s1, s2}, domain.ErrSignatureUntimestamped},
		{"legacy, forged", domain.SignLegacy("attacker", body), []string{s1}, domain.ErrSignatureUntimestamped},
		{"legacy, no secrets", domain.SignLegacy(s1, body), nil, domain.ErrNoSecrets},
		{"stale", domain.SignCanonical(s1, now.Add(-301*time.Second), body), []string{s1}, domain.ErrSignatureTimestamp},
		{"wrong secret", domain.SignCanonical(s1, now, body), []string{s2}, domain.ErrSignatureMismatch},
		{"garbage", "hello", []string{s1}, domain.ErrSignatureMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := domain.VerifyCanonicalWebhook(tt.header, body, now, tt.secrets...); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignWebhookPicksScheme(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_800_000_000, 0)
	if h := domain.SignWebhook(domain.EventChargePaid, "s", at, nil); !strings.HasPrefix(h, "t=1800000000,v1=") {
		t.Fatalf("canonical header %q", h)
	}
	if h := domain.SignWebhook(domain.EventPaymentCompleted, "s", at, nil); !strings.HasPrefix(h, "sha256=") {
		t.Fatalf("legacy header %q", h)
	}
}

func TestNewWebhookSecret(t *testing.T) {
	t.Parallel()
	s, err := domain.NewWebhookSecret(bytes.NewReader(bytes.Repeat([]byte{0xab}, 32)))
	if err != nil || s != strings.Repeat("ab", 32) || len(s) != domain.WebhookSecretLen {
		t.Fatalf("secret %q, %v", s, err)
	}
	if _, err := domain.NewWebhookSecret(bytes.NewReader(nil)); err == nil {
		t.Fatal("short random source accepted")
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	s := domain.RetrySchedule
	if len(s) != domain.MaxDeliveryAttempts-1 {
		t.Fatalf("%d waits for %d attempts", len(s), domain.MaxDeliveryAttempts)
	}
	var total time.Duration
	for _, d := range s {
		total += d
	}
	if total < 81*time.Hour || total > 83*time.Hour {
		t.Fatalf("schedule spans %s, want about 3.4 days", total)
	}
	tests := []struct {
		attempt int
		u       float64
		want    time.Duration
	}{
		{1, 0.5, 5 * time.Second},
		{1, 0, 4500 * time.Millisecond},
		{1, 1, 5500 * time.Millisecond},
		{2, 0.5, 30 * time.Second},
		{14, 0.5, 24 * time.Hour},
		{20, 0.5, 24 * time.Hour},
		{3, 0.25, 2*time.Minute - 6*time.Second},
	}
	for _, tt := range tests {
		if got := domain.RetryDelay(s, tt.attempt, tt.u); got != tt.want {
			t.Errorf("attempt %d u %v: %s, want %s", tt.attempt, tt.u, got, tt.want)
		}
	}
}

func TestDeliveryRecordAttempt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		attempts  int
		res       domain.AttemptResult
		status    domain.DeliveryStatus
		next      time.Duration // 0: no next retry
		lastError bool
	}{
		{"2xx", 1, domain.AttemptResult{StatusCode: 204, Elapsed: time.Second}, domain.DeliveryDelivered, 0, false},
		{"2xx too slow", 1, domain.AttemptResult{StatusCode: 200, Elapsed: 11 * time.Second}, domain.DeliveryPending, 5 * time.Second, true},
		{"500", 2, domain.AttemptResult{StatusCode: 500}, domain.DeliveryPending, 30 * time.Second, true},
		{"transport", 3, domain.AttemptResult{Error: "connection refused"}, domain.DeliveryPending, 2 * time.Minute, true},
		{"429 longer Retry-After", 1, domain.AttemptResult{StatusCode: 429, RetryAfter: time.Minute}, domain.DeliveryPending, time.Minute, true},
		{"503 shorter Retry-After", 2, domain.AttemptResult{StatusCode: 503, RetryAfter: time.Second}, domain.DeliveryPending, 30 * time.Second, true},
		{"Retry-After capped", 1, domain.AttemptResult{StatusCode: 503, RetryAfter: 100 * time.Hour}, domain.DeliveryPending, 24 * time.Hour, true},
		{"410", 1, domain.AttemptResult{StatusCode: 410}, domain.DeliveryCancelled, 0, true},
		{"last attempt", 15, domain.AttemptResult{StatusCode: 500}, domain.DeliveryFailed, 0, true},
		{"permanent", 1, domain.AttemptResult{Error: "address not allowed", Permanent: true}, domain.DeliveryFailed, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := domain.NewWebhookDelivery("wd_x", domain.Event{ID: "evt_x", Type: domain.EventChargePaid}, "we_x", "", now)
			d.Status, d.Attempts = domain.DeliveryProcessing, tt.attempts
			if err := d.RecordAttempt(tt.res, domain.RetrySchedule, now, 0.5); err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status {
				t.Fatalf("status %s, want %s", d.Status, tt.status)
			}
			switch {
			case tt.next == 0 && d.NextRetryAt != nil:
				t.Fatalf("next retry %v, want none", d.NextRetryAt)
			case tt.next != 0 && (d.NextRetryAt == nil || !d.NextRetryAt.Equal(now.Add(tt.next))):
				t.Fatalf("next retry %v, want now+%s", d.NextRetryAt, tt.next)
			}
			if (d.LastError != nil) != tt.lastError {
				t.Fatalf("lastError %v", d.LastError)
			}
			if tt.res.StatusCode != 0 && (d.LastStatusCode == nil || *d.LastStatusCode != tt.res.StatusCode) {
				t.Fatalf("lastStatusCode %v", d.LastStatusCode)
			}
			if tt.status == domain.DeliveryDelivered && d.DeliveredAt == nil {
				t.Fatal("deliveredAt not set")
			}
			if err := d.RecordAttempt(tt.res, domain.RetrySchedule, now, 0.5); !errors.Is(err, domain.ErrDeliveryNotInFlight) {
				t.Fatalf("second record: %v", err)
			}
		})
	}
}

func TestDeliveryTransitions(t *testing.T) {
	t.Parallel()
	for _, s := range domain.DeliveryStatuses {
		if !s.Valid() {
			t.Fatalf("%s not valid", s)
		}
		if s.Final() && len(domain.DeliveryStatuses) > 0 {
			for _, to := range domain.DeliveryStatuses {
				if s.CanTransition(to) {
					t.Fatalf("final %s may go to %s", s, to)
				}
			}
		}
	}
	if !domain.DeliveryPending.CanTransition(domain.DeliveryProcessing) || domain.DeliveryPending.CanTransition(domain.DeliveryDelivered) {
		t.Fatal("PENDING transitions wrong")
	}
}

func TestValidateEventsAndURL(t *testing.T) {
	t.Parallel()
	if _, err := domain.ValidateEvents([]string{"charge.paid", "nope"}); !errors.Is(err, domain.ErrValidation) {
		t.Fatalf("unknown event: %v", err)
	}
	if _, err := domain.ValidateEvents(nil); !errors.Is(err, domain.ErrValidation) {
		t.Fatalf("no events: %v", err)
	}
	evs, err := domain.ValidateEvents([]string{"charge.paid", "payment.completed", "charge.paid"})
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v %v", evs, err)
	}
	for _, tt := range []struct {
		url   string
		https bool
		ok    bool
	}{
		{"https://example.com/hook", true, true},
		{"http://example.com/hook", true, false},
		{"http://example.com/hook", false, true},
		{"ftp://example.com", false, false},
		{"https://user:pw@example.com", false, false},
		{"/relative", false, false},
		{"https://example.com/#frag", false, false},
		{"", false, false},
	} {
		_, err := domain.ValidateWebhookURL(tt.url, tt.https)
		if (err == nil) != tt.ok {
			t.Errorf("%q https=%v: %v", tt.url, tt.https, err)
		}
	}
}
