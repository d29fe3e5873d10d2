// Package chaos holds Quita's fault-injection suite (`make chaos`). Its test
// builds quitad, drives charges, payments, refunds and webhooks through real
// HTTP against quitad processes on PostgreSQL and Redis while it kills and
// restarts them, cuts the database off, flushes Redis and runs two processes
// on one database, and then checks the invariants a payment service must keep
// whatever fails: one charge per Idempotency-Key, no lost acknowledged write,
// one settlement per paid charge, refunds within the amount, every event
// delivered with a valid signature, a clean ledger, no key blocked for good
// and no 5xx outside the fault windows.
//
// The test files carry the build tag `chaos`, so `go test ./...` (and `make
// test`) compile none of it; `make chaos` runs it. Settings, all optional:
//
//	CHAOS_SEED          seed of the fault schedule and of each client's operations (default: time)
//	CHAOS_DURATION      length of the load phase (default 120s)
//	CHAOS_CLIENTS       concurrent clients (default 8)
//	CHAOS_DRAIN         how long webhooks and refunds may take to settle after the load (default 60s)
//	CHAOS_REFUND_DRAIN  how soon after the load every refund must be final (default 5s)
//	CHAOS_MAX_*         thresholds; see thresholds in config_test.go and docs/operations.md
//
// TestChaosCluster is the same run on the local HA cluster of `make
// cluster` (`make chaos-cluster`, docs/cluster.md): it builds and starts
// nothing, sends to HAProxy's HTTP port, runs the admin commands with the
// cluster's quitad binary and settings (.cluster/cluster.env names them),
// and kills the Postgres primary's node, a quitad and the Redis master
// through scripts/cluster/fault.sh, restarting each. Besides the
// invariants above it measures how long creates stop after each primary
// kill (CHAOS_MAX_FAILOVER, default 15s), lists charges in a loop and
// counts the failed reads, and fails on any 500.
//
// The run is reproducible in what it decides (which faults, when, on which
// process, and each client's sequence of operations and amounts); the
// interleavings the scheduler and the network produce are not, which is
// what the invariants must survive.
package chaos
