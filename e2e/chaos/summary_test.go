//go:build chaos

package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// summary is what a run prints and judges its thresholds on.
type summary struct {
	cfg           config
	rec           *recorder
	inj           *injector
	chk           *checker
	outside       []attempt
	loadEnd       time.Duration
	drained       time.Duration
	backlog       [3]int // undispatched events, undelivered deliveries, open refunds at the drain's end
	hooks         [3]int // attempts received, distinct deliveries with a valid signature, invalid attempts
	ledger        string
	blockedAtEnd  []string
	openAtLoadEnd int
	// openAfterRefundDrain is the refunds open CHAOS_REFUND_DRAIN after
	// the load (or when none was left, if sooner); refundsDrained how long
	// after the load the last one became final (negative: never).
	openAfterRefundDrain int
	refundsDrained       time.Duration
	logDir               string
	reads                *reader // cluster mode only
}

// keyStats are the Idempotency-Key figures: how many keys needed a retry,
// how many met 409 in use, and the longest blocks.
func (s summary) keyStats() (keys, retried, inUse int, longest []time.Duration) {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	for _, k := range s.rec.keys {
		keys++
		if k.trials > 0 {
			retried++
		}
		if k.inUse >= 0 {
			inUse++
			longest = append(longest, k.blocks)
		}
	}
	sort.Slice(longest, func(i, j int) bool { return longest[i] > longest[j] })
	return keys, retried, inUse, longest
}

func (s summary) lines() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	add("==== chaos summary: CHAOS_SEED=%d, %v load, %d clients ====", s.cfg.seed, s.cfg.duration, s.cfg.clients)
	s.rec.mu.Lock()
	ops := make([]string, 0, len(s.rec.ops))
	for k, v := range s.rec.ops {
		ops = append(ops, fmt.Sprintf("%s %d", k, v))
	}
	requests := len(s.rec.attempts)
	s.rec.mu.Unlock()
	sort.Strings(ops)
	add("operations: %s; HTTP exchanges %d (%.0f/s)", strings.Join(ops, ", "), requests, float64(requests)/s.loadEnd.Seconds())
	f := s.chk.figures
	add("database: %d charges (%d acknowledged creates, %.0f/s), %d settled, %d refunds (%d still open)",
		f["charges in database"], f["acknowledged creates"], float64(f["acknowledged creates"])/s.loadEnd.Seconds(),
		f["settled charges"], f["refunds in database"], f["refunds still open"])
	add("refunds: %d open when the load ended, %d %v later, all final %s after it; create → REFUNDED p50 %.1fs, p99 %.1fs, max %.1fs",
		s.openAtLoadEnd, s.openAfterRefundDrain, s.cfg.refundDrain, drainedString(s.refundsDrained),
		float64(f["refund ms p50"])/1000, float64(f["refund ms p99"])/1000, float64(f["refund ms max"])/1000)
	keys, retried, inUse, longest := s.keyStats()
	top := longest[:min(len(longest), 5)]
	add("keys: %d, %d needed a retry, %d met 409 in use; longest blocks %v; still blocked at the end: %d",
		keys, retried, inUse, roundAll(top), len(s.blockedAtEnd))
	add("faults (recovery = injection until every process in rotation answered a create; 5xx and transport errors inside the window):")
	for _, w := range s.inj.windows {
		rec := fmt.Sprintf("%6.2fs", (w.recovered - w.start).Seconds())
		if w.recoveryErr != "" {
			rec = "FAILED " + w.recoveryErr
		}
		add("  %-60s recovery %s  500:%d 503:%d other5xx:%d transport:%d", w.fault.String(), rec, w.s500, w.s503, w.s5xx, w.transport)
	}
	var out5xx, outTransport int
	byStatus := map[string]int{}
	for _, a := range s.outside {
		if a.status == 0 {
			outTransport++
		} else {
			out5xx++
		}
		byStatus[fmt.Sprintf("%s:%d", a.op, a.status)]++
	}
	add("outside fault windows: %d 5xx, %d transport errors %v", out5xx, outTransport, byStatus)
	add("drain: %.1fs; left at its end: %d undispatched events, %d undelivered deliveries, %d open refunds",
		s.drained.Seconds(), s.backlog[0], s.backlog[1], s.backlog[2])
	add("webhooks: %d events (%d legacy-signed, %d still in flight), %d attempts received, %d deliveries with a valid signature, %d invalid",
		f["events"], f["events legacy-signed"], f["events still in flight"], s.hooks[0], s.hooks[1], s.hooks[2])
	if s.reads != nil {
		out = append(out, s.clusterLines()...)
	}
	add("ledger verify: %s", s.ledger)
	add("violations: %d; quitad logs: %s", len(s.rec.violations)+len(s.chk.violations), artifactPath(s.logDir))
	return out
}

func roundAll(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Millisecond).String()
	}
	return out
}

// checkThresholds reports, through errorf, every figure over its threshold.
func (s summary) checkThresholds(errorf func(string, ...any)) {
	l := s.cfg.limits
	_, _, _, longest := s.keyStats()
	if len(longest) > 0 && longest[0] > l.keyBlocked {
		errorf("a key answered 409 idempotency_key_in_use for %v, over the %v threshold (CHAOS_MAX_KEY_BLOCKED)", longest[0], l.keyBlocked)
	}
	n5xx := 0
	for _, a := range s.outside {
		if a.status != 0 {
			n5xx++
		}
	}
	if n5xx > l.outside5xx {
		errorf("%d 5xx answers outside the fault windows, threshold %d (CHAOS_MAX_5XX_OUTSIDE)", n5xx, l.outside5xx)
	}
	db500 := 0
	for _, w := range s.inj.windows {
		if strings.HasPrefix(w.kind, databaseFaults) {
			db500 += w.s500
		}
		if w.recoveryErr != "" {
			errorf("%v did not recover: %s", w.fault, w.recoveryErr)
		} else if d := w.recovered - w.start; d > l.recovery {
			errorf("%v took %v to recover, threshold %v (CHAOS_MAX_RECOVERY)", w.fault, d, l.recovery)
		}
	}
	if l.db500 >= 0 && db500 > l.db500 {
		errorf("%d answers 500 inside database fault windows, threshold %d (CHAOS_MAX_DB_500)", db500, l.db500)
	}
	if open := s.openAfterRefundDrain; l.openRefunds >= 0 && open > l.openRefunds {
		errorf("%d refunds still open %v after the load, threshold %d (CHAOS_MAX_OPEN_REFUNDS, CHAOS_REFUND_DRAIN)",
			open, s.cfg.refundDrain, l.openRefunds)
	}
	if open := s.chk.figures["refunds still open"]; l.openRefunds >= 0 && open > l.openRefunds {
		errorf("%d refunds still open after the drain, threshold %d (CHAOS_MAX_OPEN_REFUNDS)", open, l.openRefunds)
	}
	for _, p := range s.inj.cluster.procs {
		if p.inUse && !contains(s.inj.cluster.running(), p) {
			errorf("quitad %s exited by itself (log in %s)", p.name, artifactPath(s.logDir))
		}
	}
}

func contains(ps []*proc, p *proc) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func drainedString(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
