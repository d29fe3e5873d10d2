#!/usr/bin/env bash
# Throughput of the local HA cluster (docs/cluster.md, "Throughput"),
# measured from outside by wrk in its own process, closed loop:
#   1. creates through HAProxy's HTTP port with the three quitad up,
#   2. the same with one quitad (the other two stopped, then restarted),
#   3. charge lists (GET /v1/charges?limit=10) against two extra quitad
#      processes, one reading lists on the read port (replicas), one with
#      every read on the primary.
# Run it alone on the machine: any other load moves the figures.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${CLUSTER_BENCH_DURATION:-20}
CONNECTIONS=${CLUSTER_BENCH_CONNECTIONS:-32}
READ_PORTS=(18091 18092)
[[ -f $CLUSTER_DIR/quitad.env && -x $CLUSTER_DIR/bin/quitad ]] || die "no cluster in $CLUSTER_DIR: run make cluster"
command -v wrk >/dev/null || { log "installing wrk"; apt-get install -y -qq wrk >/dev/null; }

# The smoke check's merchant, created on first use.
bash "$CLUSTER_REPO/scripts/cluster/smoke.sh" >/dev/null
key=$(sed -n 's/.*"testKey": *"\([^"]*\)".*/\1/p' "$CLUSTER_DIR/smoke-account.json")
[[ -n $key ]] || die "bench: no test key in $CLUSTER_DIR/smoke-account.json"
# The merchant's request limit would answer most of the load 429: lift it,
# as the chaos suite does.
account=$(sed -n 's/.*"accountId": *"\([^"]*\)".*/\1/p' "$CLUSTER_DIR/smoke-account.json")
bash "$CLUSTER_REPO/scripts/cluster/quitad.sh" account guards --account "$account" --rate 1000000 --burst 1000000 >/dev/null
sleep 6 # each process caches an account's settings for 5 s

lua=$(mktemp --suffix=.lua)
extra_pids=()
cleanup() {
	rm -f "$lua"
	for p in "${extra_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# wrk script: a create with its own Idempotency-Key per request, or a GET;
# one JSON line with the rate and wrk's latency percentiles (µs, from each
# request's send).
cat >"$lua" <<'LUA'
local method, prefix = os.getenv("BENCH_METHOD"), os.getenv("BENCH_PREFIX")
local threads = {}
function setup(thread) thread:set("tid", #threads); table.insert(threads, thread) end
local n = 0
function request()
	n = n + 1
	local h = {["apikey"] = os.getenv("BENCH_KEY")}
	if method == "POST" then
		h["Content-Type"] = "application/json"
		h["Idempotency-Key"] = prefix .. "-" .. tid .. "-" .. n
		return wrk.format("POST", nil, h, '{"amount": 1990, "payment_method": "pix", "description": "cluster bench"}')
	end
	return wrk.format("GET", nil, h)
end
function done(s, latency, requests)
	local e = s.errors
	io.write(string.format('{"rate":%.0f,"non2xx":%d,"errors":%d,"p50":%d,"p99":%d,"p999":%d}\n',
		s.requests / (s.duration / 1e6), e.status, e.connect + e.read + e.write + e.timeout,
		latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
LUA

# run LABEL METHOD URL: one wrk run, one table row.
run() {
	local label=$1 method=$2 url=$3 out
	out=$(BENCH_METHOD=$method BENCH_KEY=$key BENCH_PREFIX="bench-$(date +%s%N)" \
		wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -s "$lua" "$url" | grep '^{"rate"')
	printf '| %s | %s |\n' "$label" "$(sed -E 's/[{}"]//g; s/,/ | /g; s/:/ /g' <<<"$out")"
}

echo "| run | rate/s | non-2xx | errors | p50 µs | p99 µs | p99.9 µs |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
run "creates, 3 quitad through HAProxy" POST "$HTTP_URL/v1/charges"
stop q2
stop q3
sleep 3 # HAProxy marks them down after two failed checks
run "creates, 1 quitad through HAProxy" POST "$HTTP_URL/v1/charges"
bash "$CLUSTER_REPO/scripts/cluster/up.sh" --no-build >>"$LOG_DIR/restart.log" 2>&1

# Two extra quitad on their own ports: lists on the replicas, or on the
# primary (the same settings without QUITA_DATABASE_READ_URL).
mapfile -t settings < <(grep -E '^QUITA_[A-Z0-9_]+=' "$CLUSTER_DIR/quitad.env")
mapfile -t primary_only < <(printf '%s\n' "${settings[@]}" | grep -v '^QUITA_DATABASE_READ_URL=')
env "${settings[@]}" "$CLUSTER_DIR/bin/quitad" serve -addr "127.0.0.1:${READ_PORTS[0]}" >>"$LOG_DIR/bench-replica.log" 2>&1 &
extra_pids+=($!)
env -u QUITA_DATABASE_READ_URL "${primary_only[@]}" "$CLUSTER_DIR/bin/quitad" serve -addr "127.0.0.1:${READ_PORTS[1]}" >>"$LOG_DIR/bench-primary.log" 2>&1 &
extra_pids+=($!)
for p in "${READ_PORTS[@]}"; do
	wait_until 30 "quitad on $p" curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$p/healthz"
done
run "lists, 1 quitad, reads on the replicas" GET "http://127.0.0.1:${READ_PORTS[0]}/v1/charges?limit=10"
run "lists, 1 quitad, reads on the primary" GET "http://127.0.0.1:${READ_PORTS[1]}/v1/charges?limit=10"
