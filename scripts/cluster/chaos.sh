#!/usr/bin/env bash
# Fault injection on the running HA cluster (make chaos-cluster; docs/cluster.md).
#
# Clients create test charges through HAProxy's HTTP port while the script
# kills, at CHAOS_INTERVAL, the Postgres primary, one quitad and the Redis
# master, measures how long each takes to be replaced, and restarts what it
# killed (scripts/cluster/up.sh --no-build starts whatever is down). Then it
# checks what must hold whatever failed:
#   - every charge answered 201 is in the database (no acknowledged write lost),
#   - one charge per Idempotency-Key (each charge's description is its key),
#   - a replayed key answers the charge it created,
#   - quitad ledger verify passes.
# It prints the answers by status, inside and outside the fault windows,
# and the measured times. Settings, all optional:
#   CHAOS_DURATION  seconds of load (default 120)
#   CHAOS_CLIENTS   concurrent clients (default 4)
#   CHAOS_INTERVAL  seconds between faults (default 30)
#   CHAOS_PG_KILL   node: SIGKILL the leader's Patroni and postmaster, so a
#                   standby is promoted (default); postmaster: SIGKILL the
#                   postmaster only, which Patroni restarts in place
#
# The load is a small curl loop, not e2e/chaos's richer one: that harness
# starts its own quitad processes and sends to their addresses, so it
# cannot drive HAProxy's port (docs/cluster.md says what it would need).
# The fault functions run through the faults array, which shellcheck does
# not follow.
# shellcheck disable=SC2317
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${CHAOS_DURATION:-120}
CLIENTS=${CHAOS_CLIENTS:-4}
INTERVAL=${CHAOS_INTERVAL:-30}
PG_KILL=${CHAOS_PG_KILL:-node}
UP=$CLUSTER_REPO/scripts/cluster/up.sh
QUITAD=$CLUSTER_REPO/scripts/cluster/quitad.sh

for name in etcd pg1 pg2 pg3 haproxy redis1 redis2 sentinel1 sentinel2 sentinel3 q1 q2 q3; do
	alive "$name" || die "$name is not running: make cluster first"
done
[[ -s $CLUSTER_DIR/smoke-account.json ]] || bash "$CLUSTER_REPO/scripts/cluster/smoke.sh" >/dev/null

run=$(date +%s)
work=$CLUSTER_DIR/chaos/$run
mkdir -p "$work"
acct=$(jq -r .accountId "$CLUSTER_DIR/smoke-account.json")
key=$(jq -r .testKey "$CLUSTER_DIR/smoke-account.json")
# The rate limiter is not under test.
"$QUITAD" account guards --account "$acct" --rate 100000 --burst 100000 >/dev/null 2>>"$LOG_DIR/admin.log"

now_ms() { date +%s%3N; }
start_ms=$(now_ms)
since() { printf '%d.%01d' $((($(now_ms) - $1) / 1000)) $(((($(now_ms) - $1) % 1000) / 100)); }
note() { printf '+%6ss %s\n' "$(since "$start_ms")" "$*" | tee -a "$work/faults.log"; }

# body KEY N: the request of the Nth charge of a client, the same on a retry
# and on the replay.
body() { printf '{"amount": %d, "payment_method": "pix", "description": "%s"}' $((100 + ($2 * 7919) % 50000)) "$1"; }

# create KEY N FILE: POST the charge, retrying the same key on 409 (in use),
# 429, 5xx and transport errors for up to 6 tries; appends each answer to
# requests.log and the final 201 to acked.log.
create() {
	local k=$1 n=$2 resp=$3 try code out
	for try in 1 2 3 4 5 6; do
		out=$(curl -s -o "$resp" -w '%{http_code}' --max-time 10 "$HTTP_URL/v1/charges" \
			-H "apikey: $key" -H "Idempotency-Key: $k" -H 'Content-Type: application/json' -d "$(body "$k" "$n")") || true
		code=${out:-000}
		printf '%s %s %s %s\n' "$(now_ms)" "$k" "$try" "$code" >>"$work/requests.log"
		case $code in
		201)
			printf '%s %s\n' "$k" "$(jq -r .id "$resp")" >>"$work/acked.log"
			return 0
			;;
		409 | 429 | 5?? | 000) sleep 0.5 ;;
		*) return 0 ;;
		esac
	done
}

client() {
	local c=$1 n=0 end=$((start_ms + DURATION * 1000))
	while (($(now_ms) < end)); do
		n=$((n + 1))
		create "cc-$run-$c-$n" "$n" "$work/answer.$c"
	done
	rm -f "$work/answer.$c"
}

# ---------------------------------------------------------------- faults

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
}
write_port_member() { psql "postgres://postgres@127.0.0.1:$HAPROXY_PG_WRITE_PORT/postgres?sslmode=disable&connect_timeout=1" -XAtqc 'SELECT inet_server_port() WHERE NOT pg_is_in_recovery()' 2>/dev/null; }

# await2 T0 A ARG_A B ARG_B: polls the checks A ARG_A and B ARG_B every
# 0.1 s for up to 60 s and prints, for each, the seconds (one decimal)
# from T0 (ms) to the first time it passed, or "never".
await2() {
	local t0=$1 a=$2 arg_a=$3 b=$4 arg_b=$5 ta='' tb=''
	while (($(now_ms) - t0 < 60000)) && [[ -z $ta || -z $tb ]]; do
		[[ -z $ta ]] && "$a" "$arg_a" >/dev/null 2>&1 && ta=$(since "$t0")
		[[ -z $tb ]] && "$b" "$arg_b" >/dev/null 2>&1 && tb=$(since "$t0")
		sleep 0.1
	done
	printf '%s %s' "${ta:-never}" "${tb:-never}"
}

new_leader_not() { local l; l=$(leader); [[ -n $l && $l != "$1" ]]; }
writes_on_other() { local p; p=$(write_port_member); [[ -n $p && $p != "$1" ]]; }
writes_on() { [[ $(write_port_member) == "$1" ]]; }

fault_postgres() {
	local old i port patroni_pid pm_pid promoted writes
	old=$(leader)
	[[ -n $old ]] || {
		note "postgres: no leader to kill"
		return 0
	}
	i=${old#pg}
	port=${PG_PORTS[i - 1]}
	patroni_pid=$(recorded_pid "$old")
	pm_pid=$(pg_member_pid "$i")
	local t0
	if [[ $PG_KILL == node ]]; then
		note "postgres: kill -9 $old (Patroni $patroni_pid and postmaster $pm_pid), the primary"
		t0=$(now_ms)
		kill -KILL "$patroni_pid" "$pm_pid" 2>/dev/null || true
		read -r promoted writes <<<"$(await2 "$t0" new_leader_not "$old" writes_on_other "$port")"
		note "postgres: new leader $(leader) after ${promoted}s; HAProxy's write port reaches it after ${writes}s"
		printf 'postgres-node %s %s\n' "$promoted" "$writes" >>"$work/timings"
	else
		note "postgres: kill -9 the postmaster $pm_pid of $old, the primary"
		t0=$(now_ms)
		kill -KILL "$pm_pid" 2>/dev/null || true
		# Patroni restarts it in place, still the leader: the time that
		# matters is the write port's.
		read -r writes _ <<<"$(await2 "$t0" writes_on "$port" writes_on "$port")"
		note "postgres: writes through HAProxy after ${writes}s; the leader is $(leader)"
		printf 'postgres-postmaster - %s\n' "$writes" >>"$work/timings"
	fi
	restart
}

fault_quitad() {
	local q=q$((RANDOM % 3 + 1))
	note "quitad: kill -9 $q ($(recorded_pid "$q"))"
	kill -KILL "$(recorded_pid "$q")" 2>/dev/null || true
	sleep 2
	restart
}

sentinel_says() { redis_cli -p "${SENTINEL_PORTS[0]}" sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>/dev/null | paste -sd :; }
master_moved() { local m; m=$(sentinel_says); [[ -n $m && $m != "$1" ]]; }
redis_writes() { [[ $(timeout 2 redis-cli -h 127.0.0.1 -p "$HAPROXY_REDIS_PORT" set quita-cluster:chaos "$run" 2>/dev/null) == OK ]]; }

fault_redis() {
	local old port i name
	old=$(sentinel_says)
	port=${old##*:}
	for i in 1 2; do [[ ${REDIS_PORTS[i - 1]} == "$port" ]] && name=redis$i; done
	[[ -n ${name:-} ]] || {
		note "redis: master $old is not one of ours"
		return 0
	}
	note "redis: kill -9 $name ($(recorded_pid "$name")), the master"
	local t0 moved writes
	t0=$(now_ms)
	kill -KILL "$(recorded_pid "$name")" 2>/dev/null || true
	read -r moved writes <<<"$(await2 "$t0" master_moved "$old" redis_writes "")"
	note "redis: Sentinel names $(sentinel_says) after ${moved}s; writes through HAProxy's Redis port after ${writes}s"
	printf 'redis %s %s\n' "$moved" "$writes" >>"$work/timings"
	restart
}

restart() {
	local t0
	t0=$(now_ms)
	bash "$UP" --no-build >>"$work/restart.log" 2>&1 || note "restart: up.sh failed (see $work/restart.log)"
	note "restart: everything up again after $(since "$t0")s"
}

# ------------------------------------------------------------------ run

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

note "chaos: $CLIENTS clients for ${DURATION}s through $HTTP_URL, a fault every ${INTERVAL}s (work in $work)"
for ((c = 1; c <= CLIENTS; c++)); do
	client "$c" &
	pids+=($!)
done
faults=(fault_postgres fault_quitad fault_redis)
# Fault f is due at (f+1) * CHAOS_INTERVAL, and at least 5 s after the
# previous one's restart; none starts in the last 10 s of the load.
for ((f = 0; ; f++)); do
	due=$((start_ms + (f + 1) * INTERVAL * 1000))
	now=$(now_ms)
	((due - now >= 5000)) || due=$((now + 5000))
	sleep "$(((due - now) / 1000)).$(printf '%03d' $(((due - now) % 1000)))"
	(($(now_ms) - start_ms + 10000 < DURATION * 1000)) || break
	"${faults[f % ${#faults[@]}]}"
done
wait "${pids[@]}"
pids=()
note "load ended; checking"

# ---------------------------------------------------------------- checks

status=0
fail() {
	note "FAIL: $*"
	status=1
}
db() { psql "$PG_WRITE_URL" -XAtq -v ON_ERROR_STOP=1 "$@"; }

touch "$work/acked.log" "$work/requests.log"
sort -u "$work/acked.log" >"$work/acked.sorted"
db -c "SELECT description || ' ch_' || id FROM charges WHERE account_id = '$acct' AND description LIKE 'cc-$run-%'" | sort -u >"$work/stored.sorted"
lost=$(comm -23 "$work/acked.sorted" "$work/stored.sorted" | wc -l)
((lost == 0)) || fail "$lost acknowledged charges are not in the database (comm -23 acked.sorted stored.sorted)"
dups=$(db -c "SELECT description FROM charges WHERE account_id = '$acct' AND description LIKE 'cc-$run-%' GROUP BY description HAVING count(*) > 1" | wc -l)
((dups == 0)) || fail "$dups Idempotency-Keys have more than one charge"

replayed=0 mismatched=0
while read -r k id; do
	n=${k##*-}
	got=$(curl -s --max-time 10 "$HTTP_URL/v1/charges" -H "apikey: $key" -H "Idempotency-Key: $k" \
		-H 'Content-Type: application/json' -d "$(body "$k" "$n")" | jq -r '.id // empty')
	replayed=$((replayed + 1))
	[[ $got == "$id" ]] || mismatched=$((mismatched + 1))
done < <(shuf -n 50 "$work/acked.sorted" 2>/dev/null || true)
((mismatched == 0)) || fail "$mismatched of $replayed replayed keys did not answer their charge"

if ! "$QUITAD" ledger verify >"$work/ledger.log" 2>&1; then
	fail "quitad ledger verify (see $work/ledger.log)"
fi

echo
echo "== chaos-cluster summary (run $run)"
printf '  charges acknowledged %d, stored %d, lost %d, duplicated keys %d, replays %d (%d wrong)\n' \
	"$(wc -l <"$work/acked.sorted")" "$(wc -l <"$work/stored.sorted")" "$lost" "$dups" "$replayed" "$mismatched"
echo "  answers by status (every try):"
awk '{n[$4]++} END {for (c in n) printf "    %s %d\n", c, n[c]}' "$work/requests.log" | sort
echo "  faults:"
sed 's/^/    /' "$work/faults.log"
echo "  measured (seconds): kind, replaced after, writes back after"
sed 's/^/    /' "$work/timings" 2>/dev/null || true
((status == 0)) && echo "chaos-cluster: ok" || echo "chaos-cluster: FAILED"
exit "$status"
