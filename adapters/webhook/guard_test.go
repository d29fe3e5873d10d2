package webhook_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/webhook"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Live endpoints may not point at loopback, private, link-local or
// metadata addresses, by literal or by name.
func TestGuardRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	strict := webhook.NewGuard(webhook.Policy{})
	lax := webhook.NewGuard(webhook.Policy{AllowPrivate: true})
	tests := []struct {
		url  string
		mode domain.Mode
		// want: nil, ports.ErrURLForbidden or domain.ErrValidation
		strict, lax error
	}{
		{"https://127.0.0.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://10.0.0.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://192.168.1.20/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://172.16.0.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://100.64.0.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://169.254.169.254/latest/meta-data", domain.ModeLive, ports.ErrURLForbidden, ports.ErrURLForbidden},
		{"https://169.254.1.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[::1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[fe80::1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[fd00:ec2::254]/hook", domain.ModeLive, ports.ErrURLForbidden, ports.ErrURLForbidden},
		{"https://[::ffff:127.0.0.1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://0.0.0.0/hook", domain.ModeLive, ports.ErrURLForbidden, ports.ErrURLForbidden},
		{"https://localhost/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://localhost:8443/hook", domain.ModeTest, ports.ErrURLForbidden, nil},
		// security.md, item 11: the IANA special-purpose blocks and the forms
		// that embed an IPv4 address.
		{"https://[::127.0.0.1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[64:ff9b::7f00:1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[64:ff9b:1::a00:1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[2002:7f00:1::1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[2001:db8::1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[100::1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[fec0::1]/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://198.18.0.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://198.19.255.255/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://240.0.0.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://192.0.0.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://192.0.2.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://198.51.100.7/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://203.0.113.9/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://192.88.99.1/hook", domain.ModeLive, ports.ErrURLForbidden, nil},
		{"https://[2606:4700::1111]/hook", domain.ModeLive, nil, nil},
		{"http://93.184.216.34/hook", domain.ModeLive, domain.ErrValidation, nil},
		{"https://93.184.216.34/hook", domain.ModeLive, nil, nil},
		{"http://93.184.216.34/hook", domain.ModeTest, nil, nil},
		{"ftp://93.184.216.34/hook", domain.ModeTest, domain.ErrValidation, domain.ErrValidation},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+" "+tt.url, func(t *testing.T) {
			t.Parallel()
			if err := strict.CheckURL(t.Context(), tt.mode, tt.url); !errors.Is(err, tt.strict) || (tt.strict == nil && err != nil) {
				t.Errorf("strict: %v, want %v", err, tt.strict)
			}
			if err := lax.CheckURL(t.Context(), tt.mode, tt.url); !errors.Is(err, tt.lax) || (tt.lax == nil && err != nil) {
				t.Errorf("allow-private: %v, want %v", err, tt.lax)
			}
		})
	}
}

// The sender checks the address it connects to, whatever the URL said:
// a name that resolves to loopback (DNS rebinding after registration) is
// refused at connect time, permanently, and the receiver never sees it.
func TestSenderRefusesInternalAddressAtConnect(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	s := webhook.NewSender(webhook.Policy{})
	for _, u := range []string{srv.URL, "http://localhost:" + port, "http://[::1]:" + port, "http://[::127.0.0.1]:" + port, "http://[64:ff9b::7f00:1]:" + port} {
		res, err := s.Send(t.Context(), ports.WebhookRequest{URL: u, Body: []byte("{}"), Signature: "sha256=x", DeliveryID: "wd_x-1", EventType: domain.EventPaymentCreated})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Permanent || res.StatusCode != 0 || !strings.Contains(res.Error, "not allowed") {
			t.Fatalf("%s: %+v", u, res)
		}
	}
	if hits != 0 {
		t.Fatalf("receiver reached %d times", hits)
	}
	// With the development policy the same receiver is reached.
	res, err := webhook.NewSender(webhook.Policy{AllowPrivate: true}).Send(t.Context(), ports.WebhookRequest{URL: srv.URL, Body: []byte("{}")})
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("allowed send: %+v, %v", res, err)
	}
}

// The sender never follows redirects, reports slow receivers as failures,
// and reads Retry-After.
func TestSenderResults(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
		case "/busy":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/headers":
			if r.Header.Get(domain.SignatureHeader) != "sig" || r.Header.Get(domain.DeliveryIDHeader) != "wd_1-1" ||
				r.Header.Get(domain.EventTypeHeader) != "charge.paid" || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
		}
	}))
	t.Cleanup(srv.Close)
	s := webhook.NewSender(webhook.Policy{AllowPrivate: true})
	send := func(path string) domain.AttemptResult {
		res, err := s.Send(t.Context(), ports.WebhookRequest{URL: srv.URL + path, Body: []byte("{}"), Signature: "sig",
			DeliveryID: "wd_1-1", EventType: domain.EventChargePaid})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if r := send("/redirect"); r.StatusCode != http.StatusFound || r.Succeeded() {
		t.Fatalf("redirect: %+v", r)
	}
	if r := send("/busy"); r.StatusCode != 503 || r.RetryAfter != 7*time.Second {
		t.Fatalf("busy: %+v", r)
	}
	if r := send("/headers"); r.StatusCode != 200 || !r.Succeeded() {
		t.Fatalf("headers: %+v", r)
	}
	res, _ := s.Send(t.Context(), ports.WebhookRequest{URL: "http://127.0.0.1:1/", Body: []byte("{}")})
	if res.StatusCode != 0 || res.Error != "connection refused" || res.Permanent {
		t.Fatalf("refused: %+v", res)
	}
}
