package quitatest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/quitatest"
)

// With DeliverWebhooks the kit delivers signed events to a merchant's
// receiver, as a deployed server would.
func TestServerDeliversWebhooks(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DeliverWebhooks: true})
	acct := srv.NewAccount(t, "Loja Webhooks")

	secret := make(chan string, 1)
	got := make(chan string, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s := <-secret
		secret <- s
		if err := domain.VerifyWebhook(r.Header.Get(domain.SignatureHeader), body, time.Now(), s); err != nil {
			t.Errorf("receiver: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- r.Header.Get(domain.EventTypeHeader)
	}))
	t.Cleanup(recv.Close)

	req, _ := http.NewRequest(http.MethodPost, srv.BaseURL+"/webhooks/endpoints",
		strings.NewReader(`{"url":"`+recv.URL+`","events":["charge.created"]}`))
	req.Header.Set("apikey", acct.TestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register endpoint: %v %v", resp, err)
	}
	var ep struct {
		Secret string `json:"secret"`
	}
	decode(t, resp, &ep)
	secret <- ep.Secret

	req, _ = http.NewRequest(http.MethodPost, srv.BaseURL+"/charges", strings.NewReader(`{"amount":1500,"payment_method":"pix"}`))
	req.Header.Set("apikey", acct.TestKey)
	req.Header.Set("Idempotency-Key", "kit-webhook-0001")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create charge: %v %v", resp, err)
	}
	resp.Body.Close()
	select {
	case ev := <-got:
		if ev != "charge.created" {
			t.Fatalf("event %q", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook within 10 s")
	}
}

func decode(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
