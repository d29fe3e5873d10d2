package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The closed loop is driven by wrk when it is installed (make bench
// installs it): a C load generator spends a fraction of the CPU per
// request that Go's HTTP client does (0.05 ms per create on the 2-core
// benchmark machine), and on 2 cores shared by the server, Postgres, Redis
// and the generator, every millisecond the generator takes is one the
// server does not get. The issue's own closed-loop figures came from wrk.
// Without wrk the Go generator (loadgen.go) runs the closed loop as before.

// wrkScript makes every request a create with its own Idempotency-Key
// (the run's prefix, wrk's thread and a counter) and prints the result as
// one JSON line when wrk is done. Latencies are wrk's, in microseconds,
// from each request's send (a closed loop has no schedule to lag).
const wrkScript = `
local threads, prefix = {}, os.getenv("QUITABENCH_KEY_PREFIX")
function setup(thread)
	thread:set("tid", #threads)
	table.insert(threads, thread)
end
local n, base = 0, nil
function init(args)
	base = prefix .. "-" .. tid .. "-"
end
function request()
	n = n + 1
	return wrk.format("POST", nil, {
		["Content-Type"] = "application/json",
		["apikey"] = os.getenv("QUITABENCH_KEY"),
		["Idempotency-Key"] = base .. n,
	}, os.getenv("QUITABENCH_BODY"))
end
function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format(
		'{"requests":%d,"micros":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"p999":%d}\n',
		summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
		latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
`

// wrkResult is what wrkScript's done prints.
type wrkResult struct {
	Requests                              int
	Micros                                int64
	Connect, Read, Write, Status, Timeout int
	P50, P99, P999                        float64 // µs
}

// ok is how many requests were answered 2xx (every create's 201).
func (r wrkResult) ok() int {
	return r.Requests - r.Status - r.Read - r.Write - r.Timeout
}

func (r wrkResult) errors() int { return r.Requests - r.ok() + r.Connect }

// wrkClosedLoop runs wrk against spec's create endpoint with workers
// connections on 2 threads for spec.Duration, in its own process.
func wrkClosedLoop(ctx context.Context, path string, spec loadSpec, workers int) (wrkResult, error) {
	f, err := os.CreateTemp("", "quitabench-*.lua")
	if err != nil {
		return wrkResult{}, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(wrkScript); err != nil {
		return wrkResult{}, err
	}
	if err := f.Close(); err != nil {
		return wrkResult{}, err
	}
	cmd := exec.CommandContext(ctx, path, "-t", "2", "-c", strconv.Itoa(workers),
		"-d", strconv.Itoa(max(int(spec.Duration.Seconds()), 1))+"s", "--timeout", "5s",
		"-s", f.Name(), spec.URL+"/charges")
	cmd.Env = append(os.Environ(), "QUITABENCH_KEY="+spec.Key, "QUITABENCH_BODY="+string(body),
		"QUITABENCH_KEY_PREFIX=bench-wrk-"+randHex(8))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %w: %s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var r wrkResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return wrkResult{}, fmt.Errorf("wrk output %q: %w", out.String(), err)
	}
	if r.Requests == 0 || r.Micros <= 0 {
		return wrkResult{}, fmt.Errorf("wrk sent nothing: %s", out.String())
	}
	return r, nil
}

// seconds is the run's length as wrk measured it.
func (r wrkResult) seconds() float64 { return time.Duration(r.Micros * 1000).Seconds() }

// closedResult is a closed loop's outcome, whichever generator drove it.
type closedResult struct {
	driver         string
	ok, errors     int
	seconds        float64
	p50, p99, p999 float64 // ms
}

// closedLoopPhase runs spec's closed loop with wrk or with the Go
// generator (driver: "wrk", "go", or "auto" for wrk when on PATH).
func closedLoopPhase(ctx context.Context, driver string, spec loadSpec) (closedResult, error) {
	path, lookErr := exec.LookPath("wrk")
	switch {
	case driver == "wrk" && lookErr != nil:
		return closedResult{}, fmt.Errorf("-closed-loop wrk: %w", lookErr)
	case driver == "wrk" || driver == "auto" && lookErr == nil:
		r, err := wrkClosedLoop(ctx, path, spec, spec.Workers)
		if err == nil {
			return closedResult{driver: "wrk", ok: r.ok(), errors: r.errors(), seconds: r.seconds(),
				p50: r.P50 / 1000, p99: r.P99 / 1000, p999: r.P999 / 1000}, nil
		}
		if driver == "wrk" {
			return closedResult{}, err
		}
		// As the reference falls back from pgbench to pgx.
		fmt.Fprintln(os.Stderr, "quitabench: wrk failed, running the closed loop with the Go generator instead:", err)
		fallthrough
	case driver == "go" || driver == "auto":
		shots, err := openLoopProc(spec)
		if err != nil {
			return closedResult{}, err
		}
		r := summarize(shots, http.StatusCreated)
		return closedResult{driver: "Go generator", ok: r.ok, errors: r.shed + r.failed, seconds: spec.Duration.Seconds(),
			p50: pct(r.okLat, 50), p99: pct(r.okLat, 99), p999: pct(r.okLat, 99.9)}, nil
	}
	return closedResult{}, fmt.Errorf("-closed-loop %q: want wrk, go or auto", driver)
}
