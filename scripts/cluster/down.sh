#!/usr/bin/env bash
# Stops everything scripts/cluster/up.sh started, by the PIDs it recorded
# in $QUITA_CLUSTER_DIR/run (never by process name), in the reverse order
# of the start: quitad, HAProxy, sentinels, Redis, Patroni (which stops
# its Postgres), etcd. The data stays, so the next `make cluster` reuses
# it; with --wipe (CLUSTER_WIPE=1 make cluster-down) it is deleted too.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

wipe=false
[[ ${1:-} == --wipe ]] && wipe=true

[[ -d $RUN_DIR ]] || {
	log "nothing recorded in $RUN_DIR"
	$wipe && rm -rf "$CLUSTER_DIR"
	exit 0
}

for name in q1 q2 q3 haproxy sentinel1 sentinel2 sentinel3 redis1 redis2; do
	stop "$name" 25
done
for i in 1 2 3; do
	stop "pg$i" 60
done

# A Postgres whose Patroni was killed (by hand or by fault.sh) outlives
# it; its postmaster.pid in our data folder names it.
for i in 1 2 3; do
	data=$CLUSTER_DIR/pg$i/data
	pid=$(pg_member_pid "$i" || true)
	if [[ $pid =~ ^[0-9]+$ ]] && [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$data"; then
		log "stopping the postgres of pg$i left without Patroni (pid $pid)"
		"${AS_PG_USER[@]}" "$PG_BIN/pg_ctl" stop -D "$data" -m fast -w -t 30 >/dev/null || kill -KILL "$pid" 2>/dev/null || true
	fi
done
stop etcd 20

if $wipe; then
	log "deleting $CLUSTER_DIR"
	rm -rf "$CLUSTER_DIR"
fi
log "stopped"
