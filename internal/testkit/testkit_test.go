package testkit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/quitapix/quita/internal/testkit"
)

func TestFrozenClockMovesOnlyByAdvance(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := testkit.NewClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now %v, want %v", c.Now(), start)
	}
	c.Advance(90 * time.Second)
	if want := start.Add(90 * time.Second); !c.Now().Equal(want) {
		t.Fatalf("after Advance: %v, want %v", c.Now(), want)
	}
}

func TestWallClockAddsTheOffset(t *testing.T) {
	t.Parallel()
	c := testkit.NewClock(time.Time{})
	c.Advance(time.Hour)
	got := c.Now()
	if d := time.Until(got); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("Now is %v ahead of the wall clock, want about 1 h", d)
	}
	if got.Location() != time.UTC {
		t.Fatalf("location %v, want UTC", got.Location())
	}
}

func TestSendEncodesBodiesAndHeaders(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type", r.Header.Get("Content-Type"))
		w.Header().Set("X-Key", r.Header.Get("apikey"))
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{"error":{"type":"t","code":"c","param":"p"}}`))
	}))
	t.Cleanup(srv.Close)

	r := testkit.Do(t, http.MethodPost, srv.URL, map[string]int{"a": 1}, testkit.Header{"apikey": "k1"})
	r.Want(t, http.StatusTeapot)
	if r.Header.Get("X-Content-Type") != "application/json" || r.Header.Get("X-Key") != "k1" {
		t.Fatalf("headers seen: %v", r.Header)
	}
	if e := r.Error(); e.Type != "t" || e.Code != "c" || e.Param != "p" {
		t.Fatalf("error %+v", e)
	}
	r = testkit.Do(t, http.MethodPost, srv.URL, "raw", testkit.Header{"Content-Type": "-"})
	if ct := r.Header.Get("X-Content-Type"); ct != "" {
		t.Fatalf(`"-" left Content-Type %q`, ct)
	}
	r = testkit.Do(t, http.MethodGet, srv.URL, nil, nil)
	if ct := r.Header.Get("X-Content-Type"); ct != "" {
		t.Fatalf("no body but Content-Type %q", ct)
	}
}
