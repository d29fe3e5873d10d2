package quitatest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/quitatest"
)

// With every webhook loop polling only once an hour, a
// committed event still reaches the receiver at once (the store's commit
// signal wakes the dispatcher) and a failed attempt is retried when its
// retry falls due (a timer of the process that scheduled it), not at the
// next poll.
func TestWebhooksAreWokenNotPolled(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DeliverWebhooks: true, Webhooks: app.WebhooksConfig{
		RetrySchedule: []time.Duration{300 * time.Millisecond}, PollInterval: time.Hour, IdlePoll: time.Hour,
	}})
	acct := srv.NewAccount(t, "Loja Acordada")

	var attempts atomic.Int32
	got := make(chan time.Time, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(domain.EventTypeHeader) != "charge.created" {
			return
		}
		got <- time.Now()
		if attempts.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError) // the first attempt fails
		}
	}))
	t.Cleanup(recv.Close)

	req, _ := http.NewRequest(http.MethodPost, srv.BaseURL+"/webhooks/endpoints",
		strings.NewReader(`{"url":"`+recv.URL+`","events":["charge.created"]}`))
	req.Header.Set("apikey", acct.TestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register endpoint: %v %v", resp, err)
	}
	resp.Body.Close()

	req, _ = http.NewRequest(http.MethodPost, srv.BaseURL+"/charges", strings.NewReader(`{"amount":1500,"payment_method":"pix"}`))
	req.Header.Set("apikey", acct.TestKey)
	req.Header.Set("Idempotency-Key", "kit-wake-0001")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create charge: %v %v", resp, err)
	}
	resp.Body.Close()
	var first time.Time
	select {
	case first = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the event was not delivered: the commit did not wake the dispatcher")
	}
	select {
	case second := <-got:
		if d := second.Sub(first); d < 250*time.Millisecond {
			t.Fatalf("retried after %s, before its 300 ms schedule", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the failed attempt was not retried: its due time did not wake a delivery loop")
	}
}
