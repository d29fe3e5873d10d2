package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The flight's series are read from /metrics text and turned into the
// loop's utilization, batch size and time per batch; anything missing
// prints nothing rather than a made-up figure.
func TestFlightNote(t *testing.T) {
	before := parseFlight(strings.NewReader(`# HELP quita_store_create_batches_total x
quita_store_create_batches_total 100
quita_store_create_batched_total 900
quita_store_create_flight_seconds_total 1.5
go_goroutines 12
`))
	after := parseFlight(strings.NewReader(`quita_store_create_batches_total 2100
quita_store_create_batched_total 20900
quita_store_create_flight_seconds_total 10.5
`))
	if !before.ok || !after.ok {
		t.Fatalf("parsed %+v and %+v", before, after)
	}
	got := flightNote(before, after, 10*time.Second)
	if want := "busy 90 % of the loop, 10.0 creates per batch, 4.50 ms per batch"; !strings.Contains(got, want) {
		t.Fatalf("note %q, want %q", got, want)
	}
	sqlite := parseFlight(strings.NewReader("go_goroutines 12\n"))
	if sqlite.ok || flightNote(sqlite, sqlite, time.Second) != "" || flightNote(before, before, time.Second) != "" {
		t.Fatal("a note without the series or without batches")
	}
}

// The GET route's histogram is read from /metrics text (other routes and
// series ignored) and the phase's share within each bound printed; a
// missing series prints nothing.
func TestRouteNote(t *testing.T) {
	const route = "/v1/charges/{id}"
	metric := func(le string, n int) string {
		return `quita_http_request_duration_seconds_bucket{method="GET",route="` + route + `",le="` + le + `"} ` + strconv.Itoa(n) + "\n"
	}
	before := parseRoute(strings.NewReader(metric("0.001", 10)+metric("0.005", 20)+metric("+Inf", 20)+
		`quita_http_request_duration_seconds_bucket{method="POST",route="/v1/charges",le="0.001"} 999`+"\n"), "GET", route)
	after := parseRoute(strings.NewReader(metric("0.001", 510)+metric("0.005", 1010)+metric("+Inf", 1020)), "GET", route)
	got := routeNote(before, after, "0.001", "0.005")
	if want := "50.00 % within 1 ms, 99.00 % within 5 ms"; !strings.Contains(got, want) {
		t.Fatalf("note %q, want %q", got, want)
	}
	// Before the route's first request the series is absent: all zero.
	none := parseRoute(strings.NewReader("go_goroutines 12\n"), "GET", route)
	if got := routeNote(none, after, "0.005"); !strings.Contains(got, "99.02 % within 5 ms") {
		t.Fatalf("note from no series yet: %q", got)
	}
	if routeNote(routeHist{}, after, "0.001") != "" || routeNote(after, after, "0.001") != "" {
		t.Fatal("a note from a failed read or without requests")
	}
}
