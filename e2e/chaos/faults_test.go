//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Fault kinds.
const (
	faultKill      = "kill -9"      // SIGKILL a process, restart it after a pause
	faultStopB     = "kill -9 B"    // end the two-process window: SIGKILL B for good
	faultDBCut     = "db terminate" // pg_terminate_backend on every connection
	faultDBOutage  = "db outage"    // refuse connections for a while, terminating the open ones
	faultRedis     = "redis flush"  // FLUSHDB on the run's Redis index
	eventStartB    = "start B"      // begin the two-process window (not a fault)
	databaseFaults = "db"           // prefix shared by the database faults
)

// fault is one scheduled action.
type fault struct {
	at     time.Duration
	kind   string
	target int           // process slot (kills)
	pause  time.Duration // restart pause (kill) or outage length
}

// window is a fault's time span as the 5xx accounting sees it: from the
// injection to the moment every running process answered a create again,
// plus the grace.
type window struct {
	fault
	start, recovered, end time.Duration
	recoveryErr           string
	// Cluster faults: what was killed and when (since the run's start),
	// how long after the kill a create was first answered 201 through the
	// load balancer (-1: never), and what replaced it: the new leader, or
	// the Redis master Sentinel named and how long after the kill.
	victim, successor                 string
	killed, writesBack, successorWait time.Duration
	// Answers inside the window, by kind.
	s500, s503, s5xx, transport int
}

// schedule draws the run's faults from the seed: three kills, a cut and an
// outage of the database, a Redis flush, and a second process for about a
// third of the run, which ends with its own kill.
func schedule(seed int64, d time.Duration) []fault {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x0c4a05))
	startB := d/4 + time.Duration(rng.Int64N(int64(5*time.Second)))
	stopB := startB + d*35/100
	kinds := []string{faultKill, faultKill, faultKill, faultDBCut, faultDBOutage, faultRedis}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	// One fault per segment of [8s, d-14s], at a seeded point in its middle
	// three fifths, so windows rarely overlap.
	first, last := 8*time.Second, d-14*time.Second
	seg := (last - first) / time.Duration(len(kinds))
	out := []fault{{at: startB, kind: eventStartB, target: 1}, {at: stopB, kind: faultStopB, target: 1}}
	for i, k := range kinds {
		f := fault{kind: k, at: first + time.Duration(i)*seg + seg/5 + time.Duration(rng.Int64N(int64(seg*3/5)))}
		switch k {
		case faultKill:
			if f.at > startB && f.at < stopB && rng.IntN(2) == 1 {
				f.target = 1
			}
			f.pause = 200*time.Millisecond + time.Duration(rng.Int64N(int64(1300*time.Millisecond)))
		case faultDBOutage:
			f.pause = 2*time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

func (f fault) String() string {
	s := fmt.Sprintf("+%5.1fs %-13s", f.at.Seconds(), f.kind)
	switch f.kind {
	case faultKill:
		s += fmt.Sprintf(" process %c, restart after %v", 'A'+f.target, f.pause.Round(time.Millisecond))
	case faultDBOutage:
		s += fmt.Sprintf(" for %v", f.pause.Round(time.Millisecond))
	case faultQuitad:
		s += fmt.Sprintf(" q%d, restart after %v", f.target+1, f.pause.Round(time.Millisecond))
	}
	return s
}

// injector carries out a schedule and measures each fault's recovery.
type injector struct {
	cluster *cluster
	db      *database
	redis   *redisDB
	api     *api
	seed    int64
	grace   time.Duration

	// faultScript carries out the cluster's faults (cluster mode).
	faultScript string

	mu      sync.Mutex
	windows []*window
	errs    []string
	probes  int
}

// run executes the schedule in order, each fault at its time or as soon as
// the one before it has recovered.
func (in *injector) run(ctx context.Context, faults []fault) {
	for _, f := range faults {
		if wait := f.at - in.api.rec.since(); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		if f.kind == eventStartB {
			// B joins the rotation once healthy, as behind a load balancer.
			if err := in.cluster.start(in.cluster.procs[f.target]); err != nil {
				in.fail("start B: %v", err)
			}
			continue
		}
		w := &window{fault: f, start: in.api.rec.since(), writesBack: -1}
		if err := in.inject(ctx, w); err != nil {
			in.fail("%s: %v", f.kind, err)
		}
		in.recover(ctx, w)
		in.mu.Lock()
		in.windows = append(in.windows, w)
		in.mu.Unlock()
	}
}

func (in *injector) fail(format string, args ...any) {
	in.mu.Lock()
	in.errs = append(in.errs, fmt.Sprintf(format, args...))
	in.mu.Unlock()
}

func (in *injector) inject(ctx context.Context, w *window) error {
	f := w.fault
	switch f.kind {
	case faultKill:
		p := in.cluster.procs[f.target]
		if !p.inUse {
			p = in.cluster.procs[0]
		}
		in.cluster.kill(p, true)
		time.Sleep(f.pause)
		p.restarts++
		return in.cluster.start(p)
	case faultStopB:
		in.cluster.kill(in.cluster.procs[f.target], false)
	case faultDBCut:
		_, err := in.db.terminateBackends(ctx)
		return err
	case faultDBOutage:
		return in.db.outage(ctx, f.pause)
	case faultRedis:
		return in.redis.flush(ctx)
	case faultPGPrimary, faultQuitad, faultRedisMaster:
		return in.clusterFault(ctx, w)
	}
	return nil
}

// recover probes every process in the rotation with a create until each
// answers 201, and closes the window. The probes are ordinary keyed
// creates: they are checked like every other charge.
func (in *injector) recover(ctx context.Context, w *window) {
	deadline := time.Now().Add(90 * time.Second)
	for _, addr := range in.cluster.rotation() {
		in.mu.Lock()
		in.probes++
		key := fmt.Sprintf("chaos-%d-probe-%d", in.seed, in.probes)
		in.mu.Unlock()
		k := in.api.rec.newKey(key, chargeBody(key, 100))
		for {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			r := in.api.send(pctx, "probe", addr, http.MethodPost, "/charges", k.body, map[string]string{"Idempotency-Key": key})
			cancel()
			if r.status == http.StatusCreated {
				in.api.rec.answered(k, r.field("id"), 100)
				break
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				w.recoveryErr = fmt.Sprintf("%s still answering %d (%v) after 90s", addr, r.status, r.err)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	w.recovered = in.api.rec.since()
	w.end = w.recovered + in.grace
}

// classify puts every failed exchange into the first window it overlaps
// and returns what fell outside all of them.
func classify(attempts []attempt, windows []*window) (outside []attempt) {
	for _, a := range attempts {
		if a.status != 0 && a.status < 500 {
			continue
		}
		in := windowOf(a, windows)
		if in == nil {
			outside = append(outside, a)
			continue
		}
		switch {
		case a.status == 0:
			in.transport++
		case a.status == http.StatusInternalServerError:
			in.s500++
		case a.status == http.StatusServiceUnavailable:
			in.s503++
		default:
			in.s5xx++
		}
	}
	return outside
}

// windowOf is the first window a overlaps, or nil.
func windowOf(a attempt, windows []*window) *window {
	for _, w := range windows {
		if a.end >= w.start && a.start <= w.end {
			return w
		}
	}
	return nil
}
