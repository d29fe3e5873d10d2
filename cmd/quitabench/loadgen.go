package main

// The load generator: it runs in a process of its own
// (quitabench re-executes itself with -loadgen), so the server's process
// shares nothing with it but the machine. In an open loop it measures each
// request from its scheduled send time: a server that falls behind cannot
// hide its queueing, and one that sheds must do it quickly. The closed loop
// of the throughput figure runs there too.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// shot is one request of an open loop.
type shot struct {
	At     float64 `json:"t"`  // ms from the start to its scheduled send
	Lat    float64 `json:"l"`  // ms from its scheduled send to the answer
	Status int     `json:"s"`  // 0: no answer within the client timeout (or a transport error)
	Retry  bool    `json:"ra"` // the answer carried Retry-After
}

// loadSpec is what the generator process is asked to do.
type loadSpec struct {
	URL, Key, Op string // Op: create, get, payout or longpoll
	IDs          []string
	// Body, when set, is each create's body instead of the default.
	Body []byte
	// Keys and Waiters are the long-polls' (longpoll): Waiters waiting
	// requests per key.
	Keys     []string
	Waiters  int
	Rate     int
	Duration time.Duration
	Timeout  time.Duration
	// Workers, when set, makes it a closed loop instead: that many
	// workers each send the next request when the last one answers, for
	// Duration (Rate unused); a shot's latency is then from its send.
	Workers int
}

// openLoopProc runs spec in a child process and returns its shots.
func openLoopProc(spec loadSpec) ([]shot, error) {
	out, err := childOutput(spec)
	if err != nil {
		return nil, err
	}
	var shots []shot
	if err := json.Unmarshal(out, &shots); err != nil {
		return nil, fmt.Errorf("load generator output: %w", err)
	}
	return shots, nil
}

// childOutput runs this program as the load generator of spec, a process
// of its own, and returns what it wrote.
func childOutput(spec loadSpec) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-loadgen")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("load generator: %w", err)
	}
	return out, nil
}

// stdout is where the load generator writes its result.
func stdout() io.Writer { return os.Stdout }

// loadgenMain is the child: it reads a loadSpec on stdin and writes the
// shots (or, for long-polls, their answers) as JSON on stdout.
func loadgenMain() error {
	var spec loadSpec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		return err
	}
	if spec.Op == "longpoll" {
		return longpollMain(spec)
	}
	if spec.Timeout <= 0 {
		spec.Timeout = 5 * time.Second
	}
	client, err := newRawClient(spec.URL, spec.Timeout)
	if err != nil {
		return err
	}
	createBody := body
	if len(spec.Body) > 0 {
		createBody = spec.Body
	}
	request := func(i int, b []byte) []byte {
		switch spec.Op {
		case "get":
			return client.appendGet(b, "/charges/"+spec.IDs[i%len(spec.IDs)], spec.Key)
		case "payout":
			return client.appendPost(b, "/payouts", spec.Key, "bench-payout-", payoutBody)
		default:
			return client.appendPost(b, "/charges", spec.Key, "bench-", createBody)
		}
	}
	do := func(i int) (int, bool) {
		return client.do(func(b []byte) []byte { return request(i, b) })
	}
	warmConnections(client, spec)
	var shots []shot
	if spec.Workers > 0 {
		shots = closedShots(spec, do)
	} else {
		shots = openShots(spec, do)
	}
	w := bufio.NewWriter(os.Stdout)
	if err := json.NewEncoder(w).Encode(shots); err != nil {
		return err
	}
	return w.Flush()
}

// warmConnections opens the client's connections before the measured
// requests, as a merchant's backend keeps keep-alive connections to the
// API: without it the first few hundred ms of a phase timed this process's
// start and the TCP set-up of every connection it opened at once (GET p99
// 62 ms at 1,000/s on a loaded 2-core VM, every slow request in the first
// 200 ms). It opens as many as the phase can use at once — the closed
// loop's workers, or up to 64 for an open loop (the server's default
// in-flight limit) — with concurrent GET /healthz, which needs no key and
// touches no database.
func warmConnections(client *rawClient, spec loadSpec) {
	n := spec.Workers
	if n <= 0 {
		n = min(64, max(spec.Rate/10, 8))
	}
	healthz := func(b []byte) []byte {
		return append(client.requestLine(b, "GET", "", "/healthz"), "\r\n"...)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c, err := client.dial() // a connection of its own each
			if err != nil {
				return
			}
			if _, _, keep, err := client.roundTrip(c, healthz); err != nil || !keep {
				c.c.Close()
				return
			}
			client.give(c)
		})
	}
	wg.Wait()
}

// openShots sends spec.Rate requests a second for spec.Duration, each at
// its scheduled time whatever the answers before it, and times each from
// that schedule.
func openShots(spec loadSpec, do func(int) (int, bool)) []shot {
	interval := time.Second / time.Duration(spec.Rate)
	total := int(spec.Duration / interval)
	shots := make([]shot, total)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range total {
		scheduled := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(scheduled))
		wg.Go(func() {
			status, retry := do(i)
			shots[i] = shot{At: ms(scheduled.Sub(start)), Lat: ms(time.Since(scheduled)), Status: status, Retry: retry}
		})
	}
	wg.Wait()
	return shots
}

// closedShots runs spec.Workers workers for spec.Duration, each sending
// its next request when the last one answered (the closed loop of the
// throughput figure), timing each from its send.
func closedShots(spec loadSpec, do func(int) (int, bool)) []shot {
	var (
		mu    sync.Mutex
		shots []shot
		wg    sync.WaitGroup
	)
	start := time.Now()
	stop := start.Add(spec.Duration)
	for w := range spec.Workers {
		wg.Go(func() {
			var mine []shot
			for i := w; time.Now().Before(stop); i += spec.Workers {
				sent := time.Now()
				status, retry := do(i)
				mine = append(mine, shot{At: ms(sent.Sub(start)), Lat: ms(time.Since(sent)), Status: status, Retry: retry})
			}
			mu.Lock()
			shots = append(shots, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return shots
}

// loadResult summarises an open loop's shots.
type loadResult struct {
	offered, ok, shed, failed int
	okLat, shedLat            []float64
	statuses                  map[int]int
}

func summarize(shots []shot, want int) loadResult {
	r := loadResult{offered: len(shots), statuses: map[int]int{}}
	for _, s := range shots {
		r.statuses[s.Status]++
		switch {
		case s.Status == want:
			r.ok++
			r.okLat = append(r.okLat, s.Lat)
		case (s.Status == http.StatusServiceUnavailable || s.Status == http.StatusTooManyRequests) && s.Retry:
			r.shed++
			r.shedLat = append(r.shedLat, s.Lat)
		default:
			r.failed++
		}
	}
	return r
}

func (r loadResult) String() string {
	codes := make([]int, 0, len(r.statuses))
	for c := range r.statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, " %d:%d", c, r.statuses[c])
	}
	return fmt.Sprintf("%d offered, %d ok, %d shed, %d failed (status:count%s), ok p50 %.1f p99 %.1f p99.9 %.1f ms",
		r.offered, r.ok, r.shed, r.failed, b.String(), pct(r.okLat, 50), pct(r.okLat, 99), pct(r.okLat, 99.9))
}

// window keeps the shots scheduled within [from, to) ms.
func window(shots []shot, from, to float64) []shot {
	var out []shot
	for _, s := range shots {
		if s.At >= from && s.At < to {
			out = append(out, s)
		}
	}
	return out
}
