package main

import (
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
