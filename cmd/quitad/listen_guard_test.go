package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
)

// fakeEventItem is one event as GET /v1/events shows it.
type fakeEventItem struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Type      string          `json:"type"`
	Legacy    bool            `json:"legacy"`
	Livemode  bool            `json:"livemode"`
	CreatedAt time.Time       `json:"created_at"`
	Payload   json.RawMessage `json:"payload"`
}

func fakeEvent(t *testing.T, id, typ string, live bool, at time.Time) fakeEventItem {
	t.Helper()
	if id == "" {
		raw, err := domain.NewRawID(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		id = domain.PrefixEvent + raw
	}
	payload := fmt.Sprintf(`{"id":%q,"object":"event","api_version":"2026-11-01","type":%q,"created_at":%q,"data":{"object":{}}}`,
		id, typ, at.Format(time.RFC3339Nano))
	legacy := domain.EventType(typ).Legacy()
	if legacy {
		payload = fmt.Sprintf(`{"event":%q,"data":{}}`, typ)
	}
	return fakeEventItem{ID: id, Object: "event", Type: typ, Legacy: legacy, Livemode: live, CreatedAt: at, Payload: json.RawMessage(payload)}
}

// fakeEventsAPI answers GET /v1/events with listed (oldest first; sent
// newest first) whatever the filter asked, an empty page to a long-poll,
// and GET /v1/events/{id} with byID, else listed's event of that id.
func fakeEventsAPI(t *testing.T, listed []fakeEventItem, byID map[string]fakeEventItem) *httptest.Server {
	newestFirst := slices.Clone(listed)
	slices.Reverse(newestFirst)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if id, ok := strings.CutPrefix(r.URL.Path, "/v1/events/"); ok {
			it, found := byID[id]
			for _, e := range listed {
				if !found && e.ID == id {
					it, found = e, true
				}
			}
			if !found {
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","code":"resource_not_found","message":"no such event"}}`)
				return
			}
			_ = json.NewEncoder(w).Encode(it)
			return
		}
		data := newestFirst
		if r.URL.Query().Get("ending_before") != "" {
			select { // a long-poll that finds nothing
			case <-r.Context().Done():
			case <-time.After(50 * time.Millisecond):
			}
			data = nil
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "has_more": false, "next_cursor": nil})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestListenSignsOnlyEventsOfTheKeysModeAndTypes: listen follows an API
// that ignores the type filter and answers events of the other mode, of
// types outside the catalog, with ids that are not event ids, and an
// event that turns into another mode when read by id. Only the events of
// the test key's mode and of the --events types reach the receiver,
// signed; each other one is skipped with a warning naming it.
func TestListenSignsOnlyEventsOfTheKeysModeAndTypes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	next := func() time.Time { at = at.Add(time.Second); return at }
	good1 := fakeEvent(t, "", "charge.paid", false, next())
	unknown := fakeEvent(t, "", "charge.bogus", false, next())
	unsubscribed := fakeEvent(t, "", "payment.completed", false, next())
	live := fakeEvent(t, "", "charge.paid", true, next())
	badID := fakeEvent(t, "evt_../../../v1/charges", "charge.paid", false, next())
	turns := fakeEvent(t, "", "charge.created", false, next())
	turned := turns
	turned.Livemode = true
	other := fakeEvent(t, "", "charge.created", false, next())
	answersAnother := fakeEvent(t, "", "charge.expired", false, next())
	good2 := fakeEvent(t, "", "charge.created", false, next())
	api := fakeEventsAPI(t, []fakeEventItem{good1, unknown, unsubscribed, live, badID, turns, answersAnother, good2},
		map[string]fakeEventItem{turns.ID: turned, answersAnother.ID: other})
	skipped := []fakeEventItem{unknown, unsubscribed, live, badID, turns, answersAnother}

	rc := newVerifyingReceiver(t)
	rc.secret = strings.Repeat("cd", 32)
	key, err := domain.NewAPIKey(domain.ModeTest, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"QUITA_API_KEY": key}[k] }
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs testkit.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--api-url", api.URL, "--forward-to", rc.srv.URL + "/hooks", "--events", "charge.*",
			"--from", "all", "--wait", "1s", "--secret", rc.secret}, getenv, &out, &errs)
	}()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "every event forwarded or skipped", func() bool {
		return strings.Count(errs.String(), "skipped event")+len(rc.hooks()) >= 2+len(skipped)
	})
	time.Sleep(200 * time.Millisecond) // a later pass (overlap, long-poll) may not forward more
	var got []string
	for _, h := range rc.hooks() {
		var ev struct{ ID string }
		_ = json.Unmarshal(h.body, &ev)
		got = append(got, ev.ID)
	}
	if want := []string{good1.ID, good2.ID}; !slices.Equal(got, want) {
		t.Errorf("forwarded %v, want only %v\nstderr:\n%s", got, want, errs.String())
	}
	rc.mu.Lock()
	if len(rc.bad) > 0 {
		t.Errorf("signatures refused: %v", rc.bad)
	}
	rc.mu.Unlock()
	for _, e := range skipped {
		if !strings.Contains(errs.String(), fmt.Sprintf("skipped event %q", e.ID)) {
			t.Errorf("no warning for %s (%s, livemode %v):\n%s", e.ID, e.Type, e.Livemode, errs.String())
		}
	}
	if n := strings.Count(errs.String(), "skipped event"); n != len(skipped) {
		t.Errorf("%d warnings, want one per skipped event:\n%s", n, errs.String())
	}
}

// TestListenWithALiveKeySkipsTestEvents: the mode check holds both ways.
func TestListenWithALiveKeySkipsTestEvents(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	test := fakeEvent(t, "", "charge.paid", false, at)
	live := fakeEvent(t, "", "charge.paid", true, at.Add(time.Second))
	api := fakeEventsAPI(t, []fakeEventItem{test, live}, nil)
	rc := newVerifyingReceiver(t)
	rc.secret = strings.Repeat("ef", 32)
	key, err := domain.NewAPIKey(domain.ModeLive, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"QUITA_API_KEY": key}[k] }
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs testkit.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--api-url", api.URL, "--forward-to", rc.srv.URL, "--from", "all", "--wait", "1s",
			"--secret", rc.secret}, getenv, &out, &errs)
	}()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "both events forwarded or skipped", func() bool {
		return strings.Count(errs.String(), "skipped event")+len(rc.hooks()) >= 2
	})
	time.Sleep(200 * time.Millisecond)
	if h := rc.hooks(); len(h) != 1 || !strings.Contains(string(h[0].body), live.ID) {
		t.Errorf("forwarded %d events, want only the live one", len(h))
	}
	if !strings.Contains(errs.String(), fmt.Sprintf("skipped event %q: it is a test event and the key is a live key", test.ID)) {
		t.Errorf("stderr:\n%s", errs.String())
	}
}

// TestDevCommandsRefuseHTTPToANonLoopbackHost: listen and trigger send the
// key to --api-url, and listen signs what it answers: plain http is
// refused before any request unless the host is this machine.
func TestDevCommandsRefuseHTTPToANonLoopbackHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://api.quita.example/v1", true},
		{"https://10.0.0.5:8443", true},
		{"http://127.0.0.1:8080/v1", true},
		{"http://127.8.9.10:8080", true},
		{"http://[::1]:8080/v1", true},
		{"http://localhost:8080", true},
		{"http://LOCALHOST:8080", true},
		{"http://[::ffff:127.0.0.1]:8080", true},
		{"http://api.quita.example/v1", false},
		{"http://10.0.0.5:8080/v1", false},
		{"http://192.168.1.20:8080", false},
		{"http://0.0.0.0:8080", false},
		{"http://[::]:8080", false},
		{"http://localhost.evil.example:8080", false},
		{"http://127.0.0.1.nip.io:8080", false},
	} {
		fs := newDevFlags("test", func(string) string { return "" })
		if err := fs.Parse([]string{"--api-url", tc.url, "--api-key", "qt_test_x"}); err != nil {
			t.Fatal(err)
		}
		_, _, err := fs.api(func(string) string { return "" })
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "https")) {
			t.Errorf("%s: %v, want accepted %v", tc.url, err, tc.ok)
		}
	}
	// The whole commands, against a server that records any request.
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { mu.Lock(); hits++; mu.Unlock() }))
	t.Cleanup(srv.Close)
	nonLoopback := strings.Replace(srv.URL, "127.0.0.1", "quita-dev.invalid", 1)
	key, err := domain.NewAPIKey(domain.ModeTest, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"QUITA_API_KEY": key}[k] }
	for _, args := range [][]string{
		{"listen", "--api-url", nonLoopback, "--forward-to", "http://127.0.0.1:1/hooks"},
		{"trigger", "--api-url", nonLoopback, "charge.paid"},
	} {
		if err := run(t.Context(), args, getenv, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "must use https") {
			t.Errorf("%s: %v, want the https error", args[0], err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Errorf("%d requests reached the server", hits)
	}
}

// TestListenRefusesAnUnknownEventsFilter: --events is read against the
// catalog before anything is asked of the server.
func TestListenRefusesAnUnknownEventsFilter(t *testing.T) {
	t.Parallel()
	key, err := domain.NewAPIKey(domain.ModeTest, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"QUITA_API_KEY": key}[k] }
	for _, events := range []string{"charge.bogus", "charge.paid,", "charge", "*"} {
		err := run(t.Context(), []string{"listen", "--api-url", "http://127.0.0.1:1", "--forward-to", "http://127.0.0.1:1/hooks", "--events", events},
			getenv, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--events") {
			t.Errorf("--events %q: %v", events, err)
		}
	}
	bad := func(k string) string { return map[string]string{"QUITA_API_KEY": "sk_test_123"}[k] }
	if err := run(t.Context(), []string{"listen", "--api-url", "http://127.0.0.1:1", "--forward-to", "http://127.0.0.1:1/hooks"}, bad, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "qt_test_") {
		t.Errorf("a key that is not a Quita key: %v", err)
	}
}
