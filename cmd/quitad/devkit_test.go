package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// verifyingReceiver is a merchant's local webhook handler: it accepts only
// requests that domain.VerifyWebhook accepts with its secret.
type verifyingReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	got    []receivedHook
	bad    []string
}

type receivedHook struct {
	eventType, deliveryID string
	body                  []byte
}

func newVerifyingReceiver(t *testing.T) *verifyingReceiver {
	rc := &verifyingReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err := domain.VerifyWebhook(r.Header.Get(domain.SignatureHeader), body, time.Now(), rc.secret); err != nil {
			rc.bad = append(rc.bad, err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.got = append(rc.got, receivedHook{r.Header.Get(domain.EventTypeHeader), r.Header.Get(domain.DeliveryIDHeader), body})
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *verifyingReceiver) hooks() []receivedHook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func (rc *verifyingReceiver) types() []string {
	var out []string
	for _, h := range rc.hooks() {
		out = append(out, h.eventType)
	}
	return out
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func devCharge(t *testing.T, srv *quitatest.Server, key string) string {
	t.Helper()
	r := testkit.Do(t, http.MethodPost, srv.BaseURL+"/charges", map[string]any{"amount": 2500, "payment_method": "pix"},
		testkit.Header{"apikey": key, "Idempotency-Key": "devkit-" + strings.ReplaceAll(time.Now().Format(time.RFC3339Nano), ":", "")})
	if r.Status != http.StatusCreated {
		t.Fatalf("create charge: %d %s", r.Status, r.Body)
	}
	var c struct{ ID string }
	_ = json.Unmarshal(r.Body, &c)
	return c.ID
}

// TestListenForwardsSignedEvents runs quitad listen against a real server
// that may not call this machine (production URL rules), forwarding to a
// local receiver that verifies every signature: the events written after
// the start arrive, signed with the secret listen printed, bodies equal to
// the events API's payloads; --events filters; history is not replayed.
func TestListenForwardsSignedEvents(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			testListen(t, d.dsn(t))
		})
	}
}

func testListen(t *testing.T, dsn string) {
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: dsn, StrictWebhookURLs: true})
	acct := srv.NewAccount(t, "Loja Listen")
	before := devCharge(t, srv, acct.TestKey) // history: never forwarded

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	getenv := func(k string) string {
		if k == "QUITA_API_KEY" {
			return acct.TestKey
		}
		return ""
	}
	listen := func(out *testkit.Buffer, rc *verifyingReceiver, extra ...string) {
		args := append([]string{"listen", "--api-url", srv.URL, "--forward-to", rc.srv.URL + "/hooks", "--wait", "2s"}, extra...)
		wg.Go(func() {
			if err := run(ctx, args, getenv, out, out); err != nil {
				t.Errorf("listen %v: %v", extra, err)
			}
		})
	}
	all, paidOnly := newVerifyingReceiver(t), newVerifyingReceiver(t)
	var allOut, paidOut testkit.Buffer
	listen(&allOut, all)
	paidOnly.secret = strings.Repeat("ab", 32)
	listen(&paidOut, paidOnly, "--events", "charge.paid", "--secret", paidOnly.secret)

	// The generated secret is printed at start.
	secretLine := regexp.MustCompile(`signing secret for this run: ([0-9a-f]{64})\n`)
	eventually(t, "the banners", func() bool {
		return secretLine.MatchString(allOut.String()) && strings.Contains(paidOut.String(), "Ready.")
	})
	all.mu.Lock()
	all.secret = secretLine.FindStringSubmatch(allOut.String())[1]
	all.mu.Unlock()

	ch := devCharge(t, srv, acct.TestKey)
	r := testkit.Do(t, http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+ch+"/pay", nil, testkit.Header{"apikey": acct.TestKey})
	if r.Status != http.StatusOK {
		t.Fatalf("pay: %d %s", r.Status, r.Body)
	}
	want := []string{"charge.created", "payment.created", "charge.paid", "payment.completed", "payment.status_changed"}
	eventually(t, "five events at the receiver", func() bool { return len(all.hooks()) >= len(want) && len(paidOnly.hooks()) >= 1 })
	time.Sleep(300 * time.Millisecond) // nothing more may come
	if got := all.types(); !slices.Equal(got, want) {
		t.Errorf("forwarded %v, want %v (in write order, once each)", got, want)
	}
	if got := paidOnly.types(); !slices.Equal(got, []string{"charge.paid"}) {
		t.Errorf("--events charge.paid forwarded %v", got)
	}
	if len(all.bad)+len(paidOnly.bad) > 0 {
		t.Errorf("signatures refused: %v %v", all.bad, paidOnly.bad)
	}
	for _, h := range all.hooks() {
		if bytes.Contains(h.body, []byte(strings.TrimPrefix(before, domain.PrefixCharge))) {
			t.Errorf("an event of the charge made before listen started was forwarded: %s", h.body)
		}
		if !strings.HasPrefix(h.deliveryID, domain.PrefixDelivery) || !strings.HasSuffix(h.deliveryID, "-1") {
			t.Errorf("X-Quita-Delivery-Id %q", h.deliveryID)
		}
		// The body is the events API's payload, byte for byte.
		evID := domain.PrefixEvent + strings.TrimSuffix(strings.TrimPrefix(h.deliveryID, domain.PrefixDelivery), "-1")
		er := testkit.Do(t, http.MethodGet, srv.BaseURL+"/events/"+evID, nil, testkit.Header{"apikey": acct.TestKey})
		var ev domain.PublicEvent
		if err := json.Unmarshal(er.Body, &ev); err != nil || !bytes.Equal(ev.Payload, h.body) || string(ev.Type) != h.eventType {
			t.Errorf("forwarded %s %s differs from GET /v1/events/%s: %s", h.eventType, h.body, evID, er.Body)
		}
	}
	for _, line := range []string{"charge.paid", "-> 202"} {
		if !strings.Contains(allOut.String(), line) {
			t.Errorf("listen output lacks %q:\n%s", line, allOut.String())
		}
	}
	if n := strings.Count(allOut.String(), "-> 202"); n != len(want) {
		t.Errorf("%d answer lines, want one per event:\n%s", n, allOut.String())
	}
	// The server itself could not have delivered to this receiver.
	ep := testkit.Do(t, http.MethodPost, srv.BaseURL+"/webhooks/endpoints", map[string]any{"url": all.srv.URL, "events": []string{"charge.paid"}},
		testkit.Header{"apikey": acct.TestKey})
	if ep.Status != http.StatusBadRequest {
		t.Errorf("the server accepted a loopback endpoint (%d): the test does not show listen reaching what the server cannot", ep.Status)
	}
}

// TestTriggerEmitsEveryCatalogEvent runs quitad trigger for every event of
// the server's catalog: each one it supports appears in GET /v1/events;
// each one it cannot produce yet fails with a clear reason.
func TestTriggerEmitsEveryCatalogEvent(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.App.Workers.Run(ctx) }() // the refund worker completes refunds
	t.Cleanup(func() { cancel(); <-done })
	acct := srv.NewAccount(t, "Loja Trigger")
	getenv := func(k string) string {
		if k == "QUITA_API_KEY" {
			return acct.TestKey
		}
		return ""
	}
	cat := testkit.Do(t, http.MethodGet, srv.BaseURL+"/webhooks/event-catalog", nil, nil)
	var catalog []domain.EventDefinition
	if err := json.Unmarshal(cat.Body, &catalog); err != nil || len(catalog) == 0 {
		t.Fatalf("catalog %s: %v", cat.Body, err)
	}
	for _, d := range catalog {
		var out testkit.Buffer
		err := run(t.Context(), []string{"trigger", "--api-url", srv.BaseURL, "--timeout", "30s", string(d.Event)}, getenv, &out, &out)
		if _, unsupported := unsupportedReason(d.Event); unsupported {
			if err == nil || !strings.Contains(err.Error(), "cannot be triggered yet") {
				t.Errorf("%s: %v, want a clear 'cannot be triggered yet'", d.Event, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("trigger %s: %v\n%s", d.Event, err, out.String())
			continue
		}
		m := regexp.MustCompile(`-> ` + regexp.QuoteMeta(string(d.Event)) + ` (evt_[a-z2-7]+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Errorf("trigger %s printed no event id:\n%s", d.Event, out.String())
			continue
		}
		r := testkit.Do(t, http.MethodGet, srv.BaseURL+"/events/"+m[1], nil, testkit.Header{"apikey": acct.TestKey})
		var ev domain.PublicEvent
		if err := json.Unmarshal(r.Body, &ev); r.Status != http.StatusOK || err != nil || ev.Type != d.Event {
			t.Errorf("GET /v1/events/%s after trigger %s: %d %s", m[1], d.Event, r.Status, r.Body)
		}
	}
	// A live key is refused before anything is created; an unknown event
	// is named.
	live := func(k string) string { return map[string]string{"QUITA_API_KEY": acct.LiveKey}[k] }
	if err := run(t.Context(), []string{"trigger", "--api-url", srv.BaseURL, "charge.paid"}, live, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "test key") {
		t.Errorf("trigger with a live key: %v", err)
	}
	if err := run(t.Context(), []string{"trigger", "--api-url", srv.BaseURL, "charge.bogus"}, getenv, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "catalog") {
		t.Errorf("trigger of an unknown event: %v", err)
	}
	var list testkit.Buffer
	if err := run(t.Context(), []string{"trigger", "--api-url", srv.BaseURL, "--list"}, getenv, &list, &list); err != nil || strings.Count(list.String(), "\n") != len(catalog) {
		t.Errorf("--list: %v\n%s", err, list.String())
	}
}

// TestTriggerCoversTheCatalog: every catalog event has a recipe or a
// reason it cannot be triggered yet.
func TestTriggerCoversTheCatalog(t *testing.T) {
	t.Parallel()
	for _, d := range domain.EventCatalog {
		_, recipe := triggerRecipes[d.Event]
		_, unsupported := unsupportedReason(d.Event)
		if recipe == unsupported {
			t.Errorf("%s: recipe %v, unsupported %v (exactly one)", d.Event, recipe, unsupported)
		}
	}
}

// TestTriggerTakesOverrides: --amount, --description and --metadata shape
// the charge a recipe creates; a bad amount or pair is refused before
// anything is created.
func TestTriggerTakesOverrides(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Trigger Sob Medida")
	getenv := func(k string) string { return map[string]string{"QUITA_API_KEY": acct.TestKey}[k] }
	var out testkit.Buffer
	err := run(t.Context(), []string{"trigger", "--api-url", srv.BaseURL, "--amount", "4321", "--description", "Pedido 77",
		"--metadata", "order=77", "--metadata", "canal=loja", "charge.created"}, getenv, &out, &out)
	if err != nil {
		t.Fatalf("trigger: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`created charge (ch_[a-z2-7]+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no charge id in:\n%s", out.String())
	}
	r := testkit.Do(t, http.MethodGet, srv.BaseURL+"/charges/"+m[1], nil, testkit.Header{"apikey": acct.TestKey})
	var ch struct {
		Amount   int64          `json:"amount"`
		Metadata map[string]any `json:"metadata"` // the description is kept as metadata.description
	}
	if err := json.Unmarshal(r.Body, &ch); err != nil || ch.Amount != 4321 || ch.Metadata["description"] != "Pedido 77" ||
		ch.Metadata["order"] != "77" || ch.Metadata["canal"] != "loja" {
		t.Errorf("the triggered charge: %s (%v)", r.Body, err)
	}
	for _, bad := range [][]string{{"--amount", "0"}, {"--metadata", "novalue"}} {
		args := append([]string{"trigger", "--api-url", srv.BaseURL}, append(bad, "charge.created")...)
		if err := run(t.Context(), args, getenv, io.Discard, io.Discard); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}
