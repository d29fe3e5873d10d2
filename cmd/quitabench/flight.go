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

// routeHist is one route's request-duration histogram as the server's
// /metrics shows it (quita_http_request_duration_seconds): the requests
// counted under each bucket bound, in seconds.
type routeHist struct {
	under map[string]float64 // le → cumulative count
	ok    bool
}

// sampleRoute reads the histogram of method and route from origin's
// /metrics (all zero before the route's first request); ok is false when
// the read failed.
func sampleRoute(origin, method, route string) routeHist {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(origin + "/metrics")
	if err != nil {
		return routeHist{}
	}
	defer resp.Body.Close()
	return parseRoute(resp.Body, method, route)
}

func parseRoute(r io.Reader, method, route string) routeHist {
	h := routeHist{under: map[string]float64{}}
	prefix := `quita_http_request_duration_seconds_bucket{method="` + method + `",route="` + route + `",le="`
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		le, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return routeHist{}
		}
		h.under[le] = v
	}
	h.ok = sc.Err() == nil // the series appears with the route's first request
	return h
}

// routeNote says which share of the requests between two samples the
// server itself answered within each of bounds (seconds, as /metrics
// labels them): beside the load generator's percentiles it shows how much
// of a tail is the handler's and how much is outside it (the socket, the
// scheduler, the generator).
func routeNote(before, after routeHist, bounds ...string) string {
	if !before.ok || !after.ok {
		return ""
	}
	total := after.under["+Inf"] - before.under["+Inf"]
	if total <= 0 {
		return ""
	}
	parts := make([]string, 0, len(bounds))
	for _, le := range bounds {
		parts = append(parts, fmt.Sprintf("%.2f %% within %s ms", 100*(after.under[le]-before.under[le])/total, msLabel(le)))
	}
	return fmt.Sprintf("    inside the server (its /metrics, request read to answer written): %s\n", strings.Join(parts, ", "))
}

// msLabel turns a bucket bound in seconds ("0.005") into milliseconds.
func msLabel(le string) string {
	v, err := strconv.ParseFloat(le, 64)
	if err != nil {
		return le
	}
	return strconv.FormatFloat(v*1000, 'f', -1, 64)
}
