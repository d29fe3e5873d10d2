package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/golden"
)

type signatureVector struct {
	Name     string   `json:"name"`
	Scheme   string   `json:"scheme"`
	Body     string   `json:"body"`
	Header   string   `json:"header"`
	VerifyAt int64    `json:"verify_at"`
	Secrets  []string `json:"verify_secrets"`
	Valid    bool     `json:"valid"`
	Error    string   `json:"error"`
}

var vectorErrors = map[string]error{
	"missing":   client.ErrSignatureMissing,
	"malformed": client.ErrSignatureMalformed,
	"timestamp": client.ErrSignatureTimestamp,
	"mismatch":  client.ErrSignatureMismatch,
}

// The SDK's verifier, written apart from the server's, accepts and refuses
// exactly what the shared golden vectors say, for the reason they give.
func TestVerifySignatureGoldenVectors(t *testing.T) {
	t.Parallel()
	var file struct {
		Tolerance int64             `json:"tolerance_seconds"`
		Vectors   []signatureVector `json:"vectors"`
	}
	if err := json.Unmarshal(golden.Read(t, "webhook-signature-vectors.json"), &file); err != nil {
		t.Fatal(err)
	}
	if time.Duration(file.Tolerance)*time.Second != client.DefaultTolerance {
		t.Fatalf("vectors' tolerance %d s, SDK default %s", file.Tolerance, client.DefaultTolerance)
	}
	if len(file.Vectors) < 10 {
		t.Fatalf("only %d vectors", len(file.Vectors))
	}
	for _, v := range file.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			at := time.Unix(v.VerifyAt, 0)
			err := client.WebhookVerifier{Secrets: v.Secrets, Now: func() time.Time { return at }}.Verify(v.Header, []byte(v.Body))
			if v.Valid {
				if err != nil {
					t.Fatalf("valid vector rejected: %v", err)
				}
				return
			}
			if want := vectorErrors[v.Error]; want == nil || !errors.Is(err, want) {
				t.Fatalf("got %v, want %s", err, v.Error)
			}
		})
	}
}

// The SDK and domain.VerifyWebhook agree (accept, or the same reason to
// refuse) on signatures made by the server's signer and on mutations of
// them: secrets rotated, bodies changed, clocks skewed, headers damaged.
func TestVerifySignatureAgreesWithServer(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(14, 2))
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	const oldSecret, newSecret = "4f1c2b6e8a9d0e3f5a7b9c1d2e4f6a8b0c2d4e6f8a0b1c3d5e7f9a1b3c5d7e9f", "a0b1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b6c7d8e9f"
	errs := []error{client.ErrSignatureMissing, client.ErrSignatureMalformed, client.ErrSignatureTimestamp, client.ErrSignatureMismatch, client.ErrNoSecrets,
		client.ErrSignatureUntimestamped}
	domainErrs := []error{domain.ErrSignatureMissing, domain.ErrSignatureMalformed, domain.ErrSignatureTimestamp, domain.ErrSignatureMismatch, domain.ErrNoSecrets,
		domain.ErrSignatureUntimestamped}
	reason := func(err error, set []error) int {
		for i, e := range set {
			if errors.Is(err, e) {
				return i
			}
		}
		if err == nil {
			return -1
		}
		return -2
	}
	mutations := []func(h string, body []byte) (string, []byte){
		func(h string, b []byte) (string, []byte) { return h, b },
		func(h string, b []byte) (string, []byte) { return h, append(append([]byte{}, b...), ' ') },
		func(h string, b []byte) (string, []byte) { return strings.ToUpper(h), b },
		func(h string, b []byte) (string, []byte) { return " " + h + " ", b },
		func(h string, b []byte) (string, []byte) { return h + ",v1=" + strings.Repeat("0", 64), b },
		func(h string, b []byte) (string, []byte) { return "v0=abc," + h, b },
		func(h string, b []byte) (string, []byte) { return h[:len(h)-1], b },
		func(h string, b []byte) (string, []byte) { return strings.Replace(h, "t=", "t=0", 1), b },
		func(h string, b []byte) (string, []byte) { return h + "," + h, b },
		func(h string, b []byte) (string, []byte) { return "", b },
		func(h string, b []byte) (string, []byte) { return strings.ReplaceAll(h, ",", ", "), b },
		func(h string, b []byte) (string, []byte) { return "t=-1,v1=" + strings.Repeat("a", 64), b },
	}
	checked := 0
	for i := range 400 {
		body := fmt.Appendf(nil, `{"id":"evt_%d","type":"charge.paid","amount":%d}`, i, rng.IntN(1_000_000))
		signedAt := now.Add(time.Duration(rng.IntN(1200)-600) * time.Second)
		secret := []string{oldSecret, newSecret}[rng.IntN(2)]
		ev := []domain.EventType{domain.EventChargePaid, domain.EventPaymentCompleted}[rng.IntN(2)]
		header := domain.SignWebhook(ev, secret, signedAt, body)
		secrets := [][]string{{oldSecret}, {newSecret}, {newSecret, oldSecret}, {}, {""}}[rng.IntN(5)]
		h, b := mutations[rng.IntN(len(mutations))](header, body)
		got := client.WebhookVerifier{Secrets: secrets, Now: func() time.Time { return now }}.Verify(h, b)
		want := domain.VerifyWebhook(h, b, now, secrets...)
		if reason(got, errs) != reason(want, domainErrs) {
			t.Fatalf("header %q secrets %d: SDK says %v, server says %v", h, len(secrets), got, want)
		}
		got = client.WebhookVerifier{Secrets: secrets, Now: func() time.Time { return now }, RequireTimestamp: true}.Verify(h, b)
		want = domain.VerifyCanonicalWebhook(h, b, now, secrets...)
		if reason(got, errs) != reason(want, domainErrs) {
			t.Fatalf("strict, header %q secrets %d: SDK says %v, server says %v", h, len(secrets), got, want)
		}
		checked++
	}
	if checked != 400 {
		t.Fatal("not every case ran")
	}
}

// ParseWebhook verifies a real request and decodes both envelopes; during
// a rotation either secret is accepted.
func TestParseWebhook(t *testing.T) {
	t.Parallel()
	const oldSecret, newSecret = "old-secret-old-secret", "new-secret-new-secret"
	canonical := []byte(`{"id":"evt_1","object":"event","api_version":"2026-11-01","type":"charge.paid","created_at":"2026-11-24T12:00:00.000Z",` +
		`"data":{"object":{"id":"ch_abc","object":"charge","amount":1990,"currency":"BRL","status":"paid","payment_method":"pix",` +
		`"customer":{},"checkout_url":"http://x/abc","settlement":{"end_to_end_id":"E123"},"metadata":{"order":42},"created_at":"2026-11-24T11:59:00.000Z"}}}`)
	legacy := []byte(`{"event":"payment.completed","data":{"transactionId":"tx_abc","amount":1990,"status":"PAID","previousStatus":"WAITING_PAYMENT",` +
		`"paidWith":"PIX","providerFee":10,"platformFee":10,"netAmount":1970,"occurredAt":"2026-11-24T12:00:00.000Z"}}`)

	req := httptest.NewRequest("POST", "/hooks", strings.NewReader(string(canonical)))
	req.Header.Set(client.SignatureHeader, domain.SignCanonical(newSecret, time.Now(), canonical))
	req.Header.Set(client.DeliveryIDHeader, "wd_1-1")
	ev, err := client.ParseWebhook(req, newSecret, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := ev.Charge()
	if err != nil || ev.Type != client.EventChargePaid || ev.ID != "evt_1" || ev.DeliveryID != "wd_1-1" || ev.IsLegacy() {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if ch.ID != "ch_abc" || ch.Status != client.ChargePaid || ch.Amount != 1990 || ch.Settlement.EndToEndID != "E123" ||
		ch.Metadata["order"] != json.Number("42") || !ch.CreatedAt.Equal(time.Date(2026, 11, 24, 11, 59, 0, 0, time.UTC)) {
		t.Fatalf("charge %+v", ch)
	}

	req = httptest.NewRequest("POST", "/hooks", strings.NewReader(string(legacy)))
	req.Header.Set(client.SignatureHeader, domain.SignLegacy(oldSecret, legacy))
	ev, err = client.ParseWebhook(req, newSecret, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.IsLegacy() || ev.Type != client.EventPaymentCompleted || ev.Legacy.TransactionID != "tx_abc" ||
		*ev.Legacy.PreviousStatus != client.TxWaitingPayment || *ev.Legacy.NetAmount != 1970 {
		t.Fatalf("legacy event %+v %+v", ev, ev.Legacy)
	}
	if _, err := ev.Charge(); err == nil {
		t.Fatal("a legacy event has no charge object")
	}

	// A replay beyond the tolerance, and a forgery.
	req = httptest.NewRequest("POST", "/hooks", strings.NewReader(string(canonical)))
	req.Header.Set(client.SignatureHeader, domain.SignCanonical(newSecret, time.Now().Add(-6*time.Minute), canonical))
	if _, err := client.ParseWebhook(req, newSecret); !errors.Is(err, client.ErrSignatureTimestamp) {
		t.Fatalf("replay: %v", err)
	}
	req = httptest.NewRequest("POST", "/hooks", strings.NewReader(string(canonical)))
	req.Header.Set(client.SignatureHeader, domain.SignCanonical("attacker", time.Now(), canonical))
	if _, err := client.ParseWebhook(req, newSecret, oldSecret); !errors.Is(err, client.ErrSignatureMismatch) {
		t.Fatalf("forgery: %v", err)
	}
	if _, err := client.ParseWebhook(httptest.NewRequest("POST", "/hooks", strings.NewReader("{}"))); !errors.Is(err, client.ErrNoSecrets) {
		t.Fatalf("no secrets: %v", err)
	}
}

// TestParseWebhookRequireTimestamp: by default a legacy delivery verifies
// however long after it was sent (it carries no time); with
// RequireTimestamp every legacy header, valid or forged, is refused, and
// canonical deliveries still verify within the tolerance.
func TestParseWebhookRequireTimestamp(t *testing.T) {
	t.Parallel()
	const secret = "a0b1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b6c7d8e9f"
	legacy := []byte(`{"event":"payment.completed","data":{"transactionId":"tx_abc","amount":1990,"status":"PAID","occurredAt":"2026-11-24T12:00:00.000Z"}}`)
	canonical := []byte(`{"id":"evt_1","object":"event","api_version":"2026-11-01","type":"charge.paid","created_at":"2026-11-24T12:00:00.000Z","data":{"object":{}}}`)
	request := func(body []byte, header string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(body))
		r.Header.Set(client.SignatureHeader, header)
		return r
	}
	// A year after it was captured, the legacy request is still accepted
	// by the default verifier: that is the replay RequireTimestamp closes.
	yearLater := func() time.Time { return time.Now().AddDate(1, 0, 0) }
	captured := domain.SignLegacy(secret, legacy)
	if _, err := (client.WebhookVerifier{Secrets: []string{secret}, Now: yearLater}).Parse(request(legacy, captured)); err != nil {
		t.Fatalf("default verifier, legacy replayed a year later: %v", err)
	}
	strict := client.WebhookVerifier{Secrets: []string{"old", secret}, RequireTimestamp: true}
	for name, header := range map[string]string{
		"valid":  captured,
		"forged": domain.SignLegacy("attacker", legacy),
	} {
		if ev, err := strict.Parse(request(legacy, header)); !errors.Is(err, client.ErrSignatureUntimestamped) || ev != nil {
			t.Errorf("strict, legacy %s: %v, %v; want ErrSignatureUntimestamped", name, ev, err)
		}
	}
	if ev, err := strict.Parse(request(canonical, domain.SignCanonical(secret, time.Now(), canonical))); err != nil || ev.Type != client.EventChargePaid {
		t.Errorf("strict, canonical: %v, %v", ev, err)
	}
	if _, err := strict.Parse(request(canonical, domain.SignCanonical(secret, time.Now().Add(-6*time.Minute), canonical))); !errors.Is(err, client.ErrSignatureTimestamp) {
		t.Errorf("strict, canonical replayed: %v", err)
	}
}
