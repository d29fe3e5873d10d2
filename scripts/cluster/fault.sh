#!/usr/bin/env bash
# One fault on the running HA cluster, for the chaos suite's cluster mode
# (e2e/chaos, make chaos-cluster) or by hand:
#
#   scripts/cluster/fault.sh pg-primary      kill -9 the Postgres primary's node: its Patroni
#                                            and its postmaster, so the sync standby is promoted
#   scripts/cluster/fault.sh pg-postmaster   kill -9 the primary's postmaster only (Patroni
#                                            restarts it in place)
#   scripts/cluster/fault.sh quitad [N]      kill -9 quitad qN (default: one at random)
#   scripts/cluster/fault.sh redis-master    kill -9 the Redis master Sentinel names
#   scripts/cluster/fault.sh redis-moved OLD wait (up to 30 s) until Sentinel names a master
#                                            other than OLD (redisN)
#   scripts/cluster/fault.sh restart         start whatever is down (up.sh --no-build)
#   scripts/cluster/fault.sh leader          the member Patroni has as primary
#
# It prints NAME=VALUE lines on stdout: target= (what it killed, or the
# leader) and at_ms= (Unix milliseconds of the kill, or of the restart's
# end); diagnostics go to stderr. Only processes whose PIDs up.sh recorded
# are killed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

now_ms() { date +%s%3N; }

# leader: the member whose Patroni REST API answers 200 on /primary (what
# HAProxy's write port checks; quicker to ask than patronictl).
leader() {
	local i
	for i in 1 2 3; do
		if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:${PATRONI_PORTS[i - 1]}/primary") == 200 ]]; then
			printf 'pg%s' "$i"
			return 0
		fi
	done
	return 1
}

# sentinel_master_name: redisN, the Redis that the sentinels name master.
sentinel_master_name() {
	local port out i
	for port in "${SENTINEL_PORTS[@]}"; do
		out=$(timeout 2 redis-cli -h 127.0.0.1 -p "$port" sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>/dev/null | tail -n 1) || continue
		for i in "${!REDIS_PORTS[@]}"; do
			[[ ${REDIS_PORTS[i]} == "$out" ]] && printf 'redis%s' $((i + 1)) && return 0
		done
	done
	return 1
}

# kill9 NAME PID...: SIGKILL the PIDs, printing what was killed and when.
kill9() {
	local name=$1
	shift
	local at
	at=$(now_ms)
	kill -KILL "$@" 2>/dev/null || true
	log "fault: kill -9 $name (pid $*)"
	printf 'target=%s\nat_ms=%s\n' "$name" "$at"
}

case ${1:-} in
pg-primary | pg-postmaster)
	member=$(leader) || die "fault: no Postgres member answers /primary"
	pm=$(pg_member_pid "${member#pg}") || die "fault: $member has no postmaster.pid"
	alive "$member" || die "fault: $member's Patroni is not running"
	if [[ $1 == pg-primary ]]; then
		kill9 "$member" "$(recorded_pid "$member")" "$pm"
	else
		kill9 "$member" "$pm"
	fi
	;;
quitad)
	n=${2:-$((RANDOM % ${#QUITAD_PORTS[@]} + 1))}
	alive "q$n" || die "fault: q$n is not running"
	kill9 "q$n" "$(recorded_pid "q$n")"
	;;
redis-master)
	name=$(sentinel_master_name) || die "fault: no sentinel names a master of ours"
	alive "$name" || die "fault: $name is not running"
	kill9 "$name" "$(recorded_pid "$name")"
	;;
redis-moved)
	old=${2:?redis-moved OLD}
	for ((i = 0; i < 300; i++)); do
		name=$(sentinel_master_name || true)
		if [[ -n $name && $name != "$old" ]]; then
			printf 'target=%s\nat_ms=%s\n' "$name" "$(now_ms)"
			exit 0
		fi
		sleep 0.1
	done
	die "fault: Sentinel still names $old after 30s"
	;;
restart)
	bash "$CLUSTER_REPO/scripts/cluster/up.sh" --no-build >>"$LOG_DIR/restart.log" 2>&1 ||
		die "fault: up.sh failed (see $LOG_DIR/restart.log)"
	printf 'target=all\nat_ms=%s\n' "$(now_ms)"
	;;
leader)
	member=$(leader) || die "fault: no Postgres member answers /primary"
	printf 'target=%s\nat_ms=%s\n' "$member" "$(now_ms)"
	;;
*)
	die "usage: fault.sh pg-primary|pg-postmaster|quitad [N]|redis-master|redis-moved OLD|restart|leader"
	;;
esac
