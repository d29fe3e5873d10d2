#!/usr/bin/env bash
# Fault injection on the running HA cluster (make chaos-cluster;
# docs/cluster.md): the chaos suite's cluster mode, TestChaosCluster in
# e2e/chaos. Its clients create, pay, replay and refund charges through
# HAProxy's HTTP port and receive the webhooks, a reader lists charges in a
# loop, and its injector kills the Postgres primary's node, a quitad and
# the Redis master with scripts/cluster/fault.sh, restarting each; then it
# checks the invariants from outside and prints one closing line. The
# output is kept in $QUITA_CLUSTER_DIR/chaos/<run>.log. Settings (all
# optional): CHAOS_DURATION (default 180s), CHAOS_SEED, CHAOS_CLIENTS,
# CHAOS_MAX_FAILOVER (default 15s) and the others e2e/chaos/doc.go lists.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for name in etcd pg1 pg2 pg3 haproxy redis1 redis2 sentinel1 sentinel2 sentinel3 q1 q2 q3; do
	alive "$name" || die "$name is not running: make cluster first"
done
mkdir -p "$CLUSTER_DIR/chaos"
out=$CLUSTER_DIR/chaos/$(date -u +%Y%m%dT%H%M%SZ).log
export QUITA_CLUSTER_DIR=$CLUSTER_DIR
export CHAOS_DURATION=${CHAOS_DURATION:-180s}
status=0
(cd "$CLUSTER_REPO" && go test -tags chaos -count=1 -v -timeout 15m -run '^TestChaosCluster$' ./e2e/chaos) 2>&1 |
	tee "$out" || status=$?
echo
grep -ho 'chaos-cluster \(ok\|FAILED\):.*' "$out" | tail -n 1 || echo "chaos-cluster: no closing line (see $out)"
echo "chaos-cluster: output in $out"
exit "$status"
