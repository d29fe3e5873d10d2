package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// flightSample is the server's create flight as its /metrics shows it
// (quita_store_create_*): read over HTTP, as an operator's scraper
// would.
type flightSample struct {
	batches, creates, busySeconds float64
	ok                            bool
}

// sampleFlight reads origin's /metrics; ok is false when the series are
// missing (SQLite) or the read failed.
func sampleFlight(origin string) flightSample {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(origin + "/metrics")
	if err != nil {
		return flightSample{}
	}
	defer resp.Body.Close()
	return parseFlight(resp.Body)
}

func parseFlight(r io.Reader) flightSample {
	var s flightSample
	seen := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var dst *float64
		switch name {
		case "quita_store_create_batches_total":
			dst = &s.batches
		case "quita_store_create_batched_total":
			dst = &s.creates
		case "quita_store_create_flight_seconds_total":
			dst = &s.busySeconds
		default:
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return flightSample{}
		}
		*dst = v
		seen++
	}
	s.ok = seen == 3 && sc.Err() == nil
	return s
}

// flightNote says how busy the create flight was between two samples over
// elapsed, and how much each of its batches carried and took: a flight
// busy nearly all the time is where every create waited.
func flightNote(before, after flightSample, elapsed time.Duration) string {
	batches := after.batches - before.batches
	if !before.ok || !after.ok || batches <= 0 || elapsed <= 0 {
		return ""
	}
	busy := after.busySeconds - before.busySeconds
	return fmt.Sprintf("    the create flight (the server's /metrics): busy %.0f %% of the loop, %.1f creates per batch, %.2f ms per batch\n",
		100*busy/elapsed.Seconds(), (after.creates-before.creates)/batches, 1000*busy/batches)
}
