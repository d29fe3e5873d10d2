//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"database/sql"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Cluster fault kinds (cluster mode): each kills with SIGKILL, through
// scripts/cluster/fault.sh, a process of the HA cluster that `make
// cluster` runs, and restarts it once the cluster has replaced it.
const (
	faultPGPrimary   = "kill -9 pg primary"   // Patroni and postmaster of the leader: the sync standby is promoted
	faultQuitad      = "kill -9 quitad"       // one of the quitad behind HAProxy
	faultRedisMaster = "kill -9 redis master" // the master Sentinel names: the replica is promoted
)

// TestChaosCluster is the fault-injection run on the local HA cluster
// (`make chaos-cluster`, docs/cluster.md). It builds and starts nothing:
// the clients send to HAProxy's HTTP port, the admin commands run the
// cluster's quitad binary with the cluster's settings, the checks read the
// cluster's primary through HAProxy's write port, and the faults kill the
// Postgres primary's node, a quitad and the Redis master. Beside the
// clients, a reader lists charges in a loop. The addresses come from
// .cluster/cluster.env, which scripts/cluster/up.sh writes.
func TestChaosCluster(t *testing.T) {
	cfg := loadConfig(t)
	// A failover takes the leader key's ttl and the restart of a Postgres
	// member a few seconds more: longer runs and windows than TestChaos.
	if os.Getenv("CHAOS_DURATION") == "" {
		cfg.duration = 180 * time.Second
	}
	if os.Getenv("CHAOS_MAX_RECOVERY") == "" {
		cfg.limits.recovery = 90 * time.Second
	}
	t.Logf("CHAOS_SEED=%d (rerun with the same CHAOS_SEED to replay this schedule)", cfg.seed)
	t.Logf("config: %v, failover ≤ %v", cfg, cfg.limits.failover)

	ce := readEnvFile(t, filepath.Join(clusterDir(t), "cluster.env"))
	for _, name := range []string{"CLUSTER_HTTP_URL", "CLUSTER_PG_WRITE_URL", "CLUSTER_QUITAD_BIN", "CLUSTER_QUITAD_ENV",
		"CLUSTER_FAULT_SCRIPT", "CLUSTER_LOG_DIR"} {
		if ce[name] == "" {
			t.Fatalf("cluster.env has no %s: run make cluster", name)
		}
	}
	u, err := url.Parse(ce["CLUSTER_HTTP_URL"])
	if err != nil {
		t.Fatalf("CLUSTER_HTTP_URL: %v", err)
	}
	if err := waitHealthy(u.Host, nil, 10*time.Second); err != nil {
		t.Fatalf("the cluster's API does not answer (make cluster first): %v", err)
	}
	env := quitaFree(os.Environ())
	for name, value := range readEnvFile(t, ce["CLUSTER_QUITAD_ENV"]) {
		env = append(env, name+"="+value)
	}
	cl := &cluster{bin: ce["CLUSTER_QUITAD_BIN"], env: env, logDir: ce["CLUSTER_LOG_DIR"], target: u.Host, started: time.Now()}
	cl.admin(t, "migrate")
	accountID, key := cl.newAccount(t)

	checks, err := sql.Open("pg", ce["CLUSTER_PG_WRITE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	checks.SetMaxOpenConns(4)
	t.Cleanup(func() { checks.Close() })

	recv := newReceiver()
	defer recv.srv.Close()
	rec := newRecorder(time.Now())
	a := newAPI(cl, rec, key)
	endpoint := registerEndpoint(t, a, recv)

	inj := &injector{cluster: cl, api: a, seed: cfg.seed, grace: cfg.limits.grace, faultScript: ce["CLUSTER_FAULT_SCRIPT"]}
	r := &run{cfg: cfg, cl: cl, api: a, rec: rec, inj: inj, recv: recv, checks: checks, account: accountID,
		endpoint: endpoint, faults: clusterSchedule(cfg.seed, cfg.duration), logDir: cl.logDir, reads: &reader{api: a}}
	r.execute(t)
}

// clusterSchedule draws the cluster's faults from the seed: one every 35 s
// or so of [8s, d-14s] (at least three), in the order Postgres primary,
// quitad, Postgres primary, Redis master, again. Each lands early in its
// segment, which leaves the failover and the restart room before the next.
func clusterSchedule(seed int64, d time.Duration) []fault {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc1a5))
	cycle := []string{faultPGPrimary, faultQuitad, faultPGPrimary, faultRedisMaster}
	first, last := 8*time.Second, d-14*time.Second
	n := max(3, int((last-first)/(35*time.Second)))
	seg := (last - first) / time.Duration(n)
	var out []fault
	for i := range n {
		f := fault{kind: cycle[i%len(cycle)], at: first + time.Duration(i)*seg + time.Duration(rng.Int64N(int64(seg/4)))}
		if f.kind == faultQuitad {
			f.target = rng.IntN(3)
			f.pause = time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
		}
		out = append(out, f)
	}
	return out
}

// clusterDir is where `make cluster` keeps its files: QUITA_CLUSTER_DIR,
// else .cluster in the module root (as scripts/cluster/lib.sh decides).
func clusterDir(t *testing.T) string {
	if d := os.Getenv("QUITA_CLUSTER_DIR"); d != "" {
		return d
	}
	return filepath.Join(moduleRoot(t), ".cluster")
}

// readEnvFile reads NAME=VALUE lines; others (blank, comments) are skipped.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run make cluster)", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if name, value, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			out[name] = value
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// opList is the reader's operation.
const opList = "list"

// reader lists charges through the load balancer in a loop: reads go to
// the replicas (HAProxy's read port, the primary while none is up), so
// they should keep answering through every fault.
type reader struct {
	api *api
}

func (r *reader) loop(ctx context.Context) {
	for ctx.Err() == nil {
		r.api.send(ctx, opList, "", http.MethodGet, "/charges?limit=10", nil, nil)
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
