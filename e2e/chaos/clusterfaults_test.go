//go:build chaos

package chaos

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clusterFault carries out one cluster fault with scripts/cluster/fault.sh:
// the kill, then the measure of how long creates stopped, then (Redis)
// Sentinel's switch, then the restart of what was killed (up.sh starts
// whatever is down, as after a real crash).
func (in *injector) clusterFault(ctx context.Context, w *window) error {
	var args []string
	switch w.kind {
	case faultPGPrimary:
		args = []string{"pg-primary"}
	case faultQuitad:
		args = []string{"quitad", strconv.Itoa(w.fault.target + 1)}
	case faultRedisMaster:
		args = []string{"redis-master"}
	}
	out, err := in.script(ctx, args...)
	if err != nil {
		return err
	}
	w.victim = out["target"]
	if w.killed, err = in.since(out["at_ms"]); err != nil {
		return err
	}
	if at := in.firstWrite(ctx); at >= 0 {
		w.writesBack = at - w.killed
	}
	switch w.kind {
	case faultPGPrimary:
		if o, err := in.script(ctx, "leader"); err == nil {
			w.successor = o["target"]
		}
	case faultRedisMaster:
		o, err := in.script(ctx, "redis-moved", w.victim)
		if err != nil {
			return err
		}
		w.successor = o["target"]
		if at, err := in.since(o["at_ms"]); err == nil {
			w.successorWait = at - w.killed
		}
	case faultQuitad:
		time.Sleep(w.pause)
	}
	_, err = in.script(ctx, "restart")
	return err
}

// script runs the cluster's fault script and returns the NAME=VALUE
// lines it printed.
func (in *injector) script(ctx context.Context, args ...string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{in.faultScript}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("fault.sh %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	out := map[string]string{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), "="); ok {
			out[name] = value
		}
	}
	return out, nil
}

// since turns the script's Unix milliseconds into the run's clock.
func (in *injector) since(ms string) (time.Duration, error) {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("fault.sh printed at_ms=%q", ms)
	}
	return time.UnixMilli(n).Sub(in.api.rec.t0), nil
}

// firstWrite sends a create with a new key through the load balancer every
// 200 ms, each on its own, until one is answered 201, and returns when
// that answer arrived (-1: none within 90 s). Sending them side by side
// keeps a create that waits on a dying connection from hiding the first
// one that could succeed. The probes are keyed creates checked like every
// other; those cut short are replayed at the end.
func (in *injector) firstWrite(ctx context.Context) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	rec := in.api.rec
	first := make(chan time.Duration, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		in.mu.Lock()
		in.probes++
		key := fmt.Sprintf("chaos-%d-probe-%d", in.seed, in.probes)
		in.mu.Unlock()
		k := rec.newKey(key, chargeBody(key, 100))
		wg.Go(func() {
			pctx, cancelProbe := context.WithTimeout(ctx, 10*time.Second)
			defer cancelProbe()
			r := in.api.send(pctx, "probe", "", http.MethodPost, "/charges", k.body, map[string]string{"Idempotency-Key": key})
			if r.status == http.StatusCreated {
				rec.answered(k, r.field("id"), 100)
				select {
				case first <- rec.since():
				default:
				}
			}
		})
		select {
		case at := <-first:
			cancel()
			return at
		case <-ctx.Done():
			return -1
		case <-tick.C:
		}
	}
}

// failovers are the Postgres primary kills' times to the first write, and
// how many had none.
func (s summary) failovers() (times []time.Duration, never int) {
	for _, w := range s.inj.windows {
		if w.kind != faultPGPrimary {
			continue
		}
		if w.writesBack < 0 {
			never++
			continue
		}
		times = append(times, w.writesBack)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times, never
}

// readFigures counts the reader's lists: all, failed (not 200), failed
// outside every window, and the slowest.
func (s summary) readFigures() (reads, failed, failedOutside int, slowest time.Duration) {
	reads, failed, failedOutside, _, slowest = s.readCounts()
	return reads, failed, failedOutside, slowest
}

// readCounts is readFigures with refused: the lists answered with a
// status other than 200 anywhere, inside a fault window or not (a cut
// connection, status 0, is not counted there: the killed quitad's
// in-flight request).
func (s summary) readCounts() (reads, failed, failedOutside, refused int, slowest time.Duration) {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	for _, a := range s.rec.attempts {
		if a.op != opList {
			continue
		}
		reads++
		slowest = max(slowest, a.end-a.start)
		if a.status != http.StatusOK {
			failed++
			if windowOf(a, s.inj.windows) == nil {
				failedOutside++
			}
			if a.status != 0 {
				refused++
			}
		}
	}
	return reads, failed, failedOutside, refused, slowest
}

// statusCounts counts every answer with the given status, inside a
// window and outside all of them.
func (s summary) statusCounts(status int) (inside, outside int) {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	for _, a := range s.rec.attempts {
		if a.status != status {
			continue
		}
		if windowOf(a, s.inj.windows) != nil {
			inside++
		} else {
			outside++
		}
	}
	return inside, outside
}

// clusterLines describe the cluster faults and the reader.
func (s summary) clusterLines() []string {
	failedReads := map[*window]int{}
	s.rec.mu.Lock()
	for _, a := range s.rec.attempts {
		if w := windowOf(a, s.inj.windows); a.op == opList && a.status != http.StatusOK && w != nil {
			failedReads[w]++
		}
	}
	s.rec.mu.Unlock()
	var out []string
	for _, w := range s.inj.windows {
		line := fmt.Sprintf("  %s: killed %s at +%.1fs, creates answered 201 again after %s, %d reads failed in the window",
			w.kind, w.victim, w.killed.Seconds(), secondsOrNever(w.writesBack), failedReads[w])
		switch w.kind {
		case faultPGPrimary:
			line += ", new leader " + w.successor
		case faultRedisMaster:
			line += fmt.Sprintf(", Sentinel named %s after %.1fs", w.successor, w.successorWait.Seconds())
		}
		out = append(out, line)
	}
	reads, failed, failedOutside, slowest := s.readFigures()
	out = append(out, fmt.Sprintf("reads (GET /v1/charges through HAProxy in a loop): %d, %d failed (%d outside fault windows), slowest %.2fs",
		reads, failed, failedOutside, slowest.Seconds()))
	return out
}

// checkCluster reports what cluster mode adds to the thresholds: no 500
// anywhere, every primary kill followed by writes within the failover
// bound, no failed read outside the fault windows and no read refused
// (answered other than 200) even inside one: reads never stop.
func (s summary) checkCluster(errorf func(string, ...any)) {
	if in, out := s.statusCounts(http.StatusInternalServerError); in+out > 0 {
		errorf("%d answers 500 (%d inside fault windows, %d outside): a failover is a 503, never a 500", in+out, in, out)
	}
	times, never := s.failovers()
	if never > 0 {
		errorf("%d Postgres primary kills were never followed by a create answered 201", never)
	}
	if len(times) > 0 && times[len(times)-1] > s.cfg.limits.failover {
		errorf("writes resumed %v after a primary kill, over the %v threshold (CHAOS_MAX_FAILOVER)",
			times[len(times)-1].Round(100*time.Millisecond), s.cfg.limits.failover)
	}
	_, _, failedOutside, refused, _ := s.readCounts()
	if failedOutside > 0 {
		errorf("%d reads failed outside the fault windows", failedOutside)
	}
	if refused > 0 {
		errorf("%d reads were answered other than 200: reads must not stop during a failover", refused)
	}
}

// clusterLine is the run's closing line.
func (s summary) clusterLine(failures int) string {
	verdict := "ok"
	if failures > 0 {
		verdict = "FAILED"
	}
	times, never := s.failovers()
	fo := "none"
	if len(times) > 0 {
		fo = fmt.Sprintf("p50 %.1fs max %.1fs", times[(len(times)-1)/2].Seconds(), times[len(times)-1].Seconds())
	}
	in503, out503 := s.statusCounts(http.StatusServiceUnavailable)
	in500, out500 := s.statusCounts(http.StatusInternalServerError)
	reads, failed, failedOutside, _ := s.readFigures()
	s.rec.mu.Lock()
	requests := len(s.rec.attempts)
	s.rec.mu.Unlock()
	return fmt.Sprintf("chaos-cluster %s: seed %d, %v, %d primary kills (writes back %s, %d never), requests %d, "+
		"503 %d (%d outside windows), 500 %d, reads %d (%d failed, %d outside windows), violations %d",
		verdict, s.cfg.seed, s.cfg.duration, len(times)+never, fo, never, requests, in503+out503, out503, in500+out500,
		reads, failed, failedOutside, failures)
}

func secondsOrNever(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
