# shellcheck shell=bash disable=SC2034 # the sourcing scripts use these
# Shared settings and helpers of the local HA cluster (docs/cluster.md).
# Sourced by up.sh, down.sh, status.sh, smoke.sh, fault.sh and chaos.sh; every port
# can be overridden from the environment, and none is a default port of a
# service the machine already runs (5432, 6379, 2379, 26379, 8080).

CLUSTER_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER_DIR=${QUITA_CLUSTER_DIR:-$CLUSTER_REPO/.cluster}
CLUSTER_TEMPLATES=$CLUSTER_REPO/scripts/cluster/templates
PG_BIN=${QUITA_CLUSTER_PG_BIN:-/usr/lib/postgresql/15/bin}

# etcd: one member, the Patroni members' DCS.
ETCD_CLIENT_PORT=${ETCD_CLIENT_PORT:-12379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
# PostgreSQL members pg1..pg3 and their Patroni REST APIs.
read -ra PG_PORTS <<<"${PG_PORTS:-15431 15432 15433}"
read -ra PATRONI_PORTS <<<"${PATRONI_PORTS:-18008 18009 18010}"
# HAProxy: Postgres write and read ports, Redis master port, quitad HTTP
# and the statistics page.
HAPROXY_PG_WRITE_PORT=${HAPROXY_PG_WRITE_PORT:-15000}
HAPROXY_PG_READ_PORT=${HAPROXY_PG_READ_PORT:-15001}
HAPROXY_REDIS_PORT=${HAPROXY_REDIS_PORT:-16000}
HAPROXY_HTTP_PORT=${HAPROXY_HTTP_PORT:-18080}
HAPROXY_STATS_PORT=${HAPROXY_STATS_PORT:-18404}
# Redis: redis1 starts as master, redis2 as its replica; three sentinels.
read -ra REDIS_PORTS <<<"${REDIS_PORTS:-16379 16380}"
read -ra SENTINEL_PORTS <<<"${SENTINEL_PORTS:-26479 26480 26481}"
SENTINEL_MASTER=${SENTINEL_MASTER:-quita}
# quitad processes q1..q3.
read -ra QUITAD_PORTS <<<"${QUITAD_PORTS:-18081 18082 18083}"

PG_DATABASE=quita
PG_WRITE_URL="postgres://postgres@127.0.0.1:$HAPROXY_PG_WRITE_PORT/$PG_DATABASE?sslmode=disable"
PG_READ_URL="postgres://postgres@127.0.0.1:$HAPROXY_PG_READ_PORT/$PG_DATABASE?sslmode=disable"
REDIS_URL="redis://127.0.0.1:$HAPROXY_REDIS_PORT/0"
SENTINEL_ADDRS=$(printf '127.0.0.1:%s,' "${SENTINEL_PORTS[@]}")
SENTINEL_ADDRS=${SENTINEL_ADDRS%,}
# go-redis's Sentinel URL: the first sentinel as host, the others as addr,
# the master by name; a client with it follows the master Sentinel names.
SENTINEL_URL="redis://127.0.0.1:${SENTINEL_PORTS[0]}?master_name=$SENTINEL_MASTER$(printf '&addr=127.0.0.1:%s' "${SENTINEL_PORTS[@]:1}")"
HTTP_URL="http://127.0.0.1:$HAPROXY_HTTP_PORT"

RUN_DIR=$CLUSTER_DIR/run
LOG_DIR=$CLUSTER_DIR/logs

log() { printf 'cluster: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

# Postgres refuses to run as root: as root, the members run as the
# postgres system user; otherwise as the caller.
if [[ $EUID -eq 0 ]]; then
	PG_OS_USER=postgres
else
	PG_OS_USER=$(id -un)
fi

# AS_PG_USER prefixes a command that must run as PG_OS_USER.
AS_PG_USER=()
if [[ $EUID -eq 0 ]]; then
	AS_PG_USER=(setpriv --reuid="$PG_OS_USER" --regid="$PG_OS_USER" --init-groups --)
fi

pidfile() { printf '%s/%s.pid' "$RUN_DIR" "$1"; }

# alive NAME: the process recorded for NAME runs. The command line must
# still name the program recorded beside the PID, so a reused PID of
# someone else's process is never taken for ours.
alive() {
	local f pid want
	f=$(pidfile "$1")
	[[ -s $f ]] || return 1
	read -r pid want <"$f" || true
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$want"
}

recorded_pid() {
	local pid _
	read -r pid _ <"$(pidfile "$1")"
	printf '%s' "$pid"
}

# launch NAME MATCH CMD...: starts CMD detached from the caller's session,
# output appended to logs/NAME.log, and records its PID with MATCH (a
# string its command line contains) in run/NAME.pid. The wrapper writes
# its own PID and then execs CMD, so the recorded PID is CMD's.
launch() {
	local name=$1 match=$2
	shift 2
	local pf
	pf=$(pidfile "$name")
	rm -f "$pf"
	printf '=== start %s\n' "$(date -u +%FT%TZ)" >>"$LOG_DIR/$name.log"
	# shellcheck disable=SC2016 # $$, $0 and $1 belong to the inner shell
	setsid bash -c 'printf "%s %s\n" "$$" "$1" >"$0"; shift; exec "$@"' \
		"$pf" "$match" "$@" >>"$LOG_DIR/$name.log" 2>&1 </dev/null &
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s $pf ]] && return 0
		sleep 0.1
	done
	die "$name: no PID recorded"
}

# stop NAME [SECONDS]: SIGTERM to the recorded PID, SIGKILL after SECONDS.
stop() {
	local name=$1 wait=${2:-20} pid i
	alive "$name" || {
		rm -f "$(pidfile "$name")"
		return 0
	}
	pid=$(recorded_pid "$name")
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < wait * 10; i++)); do
		alive "$name" || break
		sleep 0.1
	done
	if alive "$name"; then
		log "$name did not stop in ${wait}s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.2
	fi
	rm -f "$(pidfile "$name")"
}

# wait_until SECONDS WHAT CMD...: polls CMD every 0.2 s until it succeeds
# or SECONDS have passed (CMD bounds its own time).
wait_until() {
	local limit=$1 what=$2
	shift 2
	local end=$((SECONDS + limit))
	while ((SECONDS < end)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "$what: not ready after ${limit}s (logs in $LOG_DIR)"
}

# render TEMPLATE OUT: replaces every @NAME@ with the value of $NAME.
render() {
	local tmpl=$1 out=$2 text var
	text=$(<"$tmpl")
	while [[ $text =~ @([A-Z0-9_]+)@ ]]; do
		var=${BASH_REMATCH[1]}
		[[ -v $var ]] || die "$tmpl: @$var@ is not set"
		text=${text//@"$var"@/${!var}}
	done
	printf '%s\n' "$text" >"$out"
}

patronictl_cmd() { patronictl -c "$CLUSTER_DIR/pg1/patroni.yml" "$@"; }

redis_cli() { redis-cli -h 127.0.0.1 "$@"; }

# pg_member_pid N: the postmaster PID of member pgN, from its data folder.
pg_member_pid() {
	local f=$CLUSTER_DIR/pg$1/data/postmaster.pid
	[[ -r $f ]] && head -n 1 "$f"
}
