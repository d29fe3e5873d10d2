package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) == 0 {
		return "(nothing on stderr)"
	}
	return strings.TrimSpace(string(t.b))
}

// refundTargets prints each phase and returns the refund targets: at least
// 300 refunds/s completed by one process when twice that is offered, p99
// from send to REFUNDED at most 1 s at the base rate (both with the
// sandbox answering at once), and throughput that grows with a second
// process — taken from the PSP-latency phases, where a process is bound by
// its acquirer's waits as at a real PSP; without them, from the
// zero-latency phases at twice the base rate.
func refundTargets(phases []refundPhase, rate int) []row {
	type key struct {
		procs, rate int
		latency     time.Duration
	}
	by := map[key]refundPhase{}
	for _, ph := range phases {
		by[key{ph.procs, ph.rate, ph.latency}] = ph
		fmt.Printf("refunds, PSP latency %s per call, %d process(es), offered %d/s: %d sent, %d refused, %d REFUNDED = %.0f/s; send → REFUNDED p50 %.0f ms, p99 %.0f ms, p99.9 %.0f ms\n",
			ph.latency, ph.procs, ph.rate, ph.sent, ph.failed, ph.done, ph.perSecond, pct(ph.lat, 50), pct(ph.lat, 99), pct(ph.lat, 99.9))
		fmt.Printf("    of which send → 201 p50 %.0f ms, p99 %.0f ms; 201 → REFUNDED p50 %.0f ms, p99 %.0f ms; CPU per refund: quitad %.2f ms, Postgres %.2f ms\n",
			pct(ph.createLat, 50), pct(ph.createLat, 99), pct(ph.workLat, 50), pct(ph.workLat, 99), ph.quitadCPU, ph.postgresCPU)
	}
	ratio := func(one, two refundPhase) float64 {
		if one.perSecond == 0 {
			return 0
		}
		return two.perSecond / one.perSecond
	}
	one := by[key{1, 2 * rate, 0}]
	cpuBound := ratio(one, by[key{2, 2 * rate, 0}])
	fmt.Printf("refunds, PSP latency 0s: 2 processes ÷ 1 at %d/s offered = %.2f× (information only: with the sandbox answering at once a process is bound by CPU, so this shows the CPU left beside one process, its Postgres and the load generator on these %d CPUs — about none on 2 — not how processes share the work)\n",
		2*rate, cpuBound, numCPU())
	growth := row{target: target{"refunds/s 2 procs ÷ 1, PSP 0s", cpuBound, "×", 1.5, true},
		ref: fmt.Sprintf("%d/s offered; CPU-bound on %d CPUs", 2*rate, numCPU())}
	if lat := *refundLatency; lat > 0 {
		psp1, psp2 := by[key{1, *refundPSPRate, lat}], by[key{2, *refundPSPRate, lat}]
		growth = row{target: target{"refunds/s 2 procs ÷ 1, PSP " + lat.String(), ratio(psp1, psp2), "×", 1.5, true},
			ref: fmt.Sprintf("%.0f → %.0f/s, %d/s offered", psp1.perSecond, psp2.perSecond, *refundPSPRate)}
		fmt.Printf("refunds, PSP latency %s per call: 2 processes ÷ 1 at %d/s offered = %.2f× (the growth row: each process is bound by its acquirer's waits, not by CPU)\n",
			lat, *refundPSPRate, growth.got)
	}
	load := loadavg()
	growth.load = load
	return []row{
		{target{"refunds/s, 1 process", one.perSecond, "refunds/s", 300, true}, fmt.Sprintf("%d/s offered, PSP 0s", 2*rate), load},
		{target{"refund p99, 1 process", pct(by[key{1, rate, 0}].lat, 99), "ms", 1000, false}, fmt.Sprintf("%d/s offered, PSP 0s", rate), load},
		growth,
	}
}

// runRefundsOnly is `quitabench -refunds-only`: the refund phases and
// their targets, without the in-process create benchmarks.
func runRefundsOnly(pgURL, redisURL string, d time.Duration, rate int, strict bool) error {
	phases, err := runRefundBench(context.Background(), pgURL, redisURL, d, rate)
	if err != nil {
		return fmt.Errorf("refund benchmark: %w", err)
	}
	return printTable(refundTargets(phases, rate), strict)
}
