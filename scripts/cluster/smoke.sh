#!/usr/bin/env bash
# Checks the running cluster end to end (make cluster-smoke): a write on
# HAProxy's Postgres write port read back on its read port, Sentinel's
# answer for the master, and a test charge created and read back through
# HAProxy's HTTP port. The merchant it uses is created on the first run
# (quitad account create, as README's quickstart); its keys stay in
# $QUITA_CLUSTER_DIR/smoke-account.json (0600) and are never printed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUITAD=$CLUSTER_REPO/scripts/cluster/quitad.sh

# json_field NAME: the first "NAME":"value" string of the JSON on stdin.
json_field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" | head -n 1; }

# Postgres: the write lands on the primary; the read port serves a
# replica, which has it once replayed (the synchronous standby at commit,
# the asynchronous one a moment later).
token="smoke-$(date +%s%N)"
export PGOPTIONS="-c client_min_messages=warning"
psql "$PG_WRITE_URL" -XAtq -v ON_ERROR_STOP=1 \
	-c 'CREATE TABLE IF NOT EXISTS cluster_smoke (token text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())' \
	-c "INSERT INTO cluster_smoke (token) VALUES ('$token')"
echo "postgres: wrote $token through the write port ($(psql "$PG_WRITE_URL" -XAtqc 'SELECT inet_server_port()'))"
found=''
for _ in $(seq 1 25); do
	found=$(psql "$PG_READ_URL" -XAtqc "SELECT inet_server_port() || ' ' || pg_is_in_recovery() FROM cluster_smoke WHERE token = '$token'" || true)
	[[ -n $found ]] && break
	sleep 0.2
done
[[ -n $found ]] || die "postgres: $token not visible on the read port after 5s"
read -r port recovery <<<"$found"
[[ $recovery == true ]] || die "postgres: the read port reached a primary (member on $port)"
echo "postgres: read it back through the read port (replica on $port)"

# Redis: Sentinel names the master, and HAProxy's Redis port reaches it.
master=$(redis_cli -p "${SENTINEL_PORTS[0]}" sentinel get-master-addr-by-name "$SENTINEL_MASTER" | paste -sd :)
[[ -n $master ]] || die "sentinel: no master for $SENTINEL_MASTER"
role=$(redis_cli -p "$HAPROXY_REDIS_PORT" info replication | tr -d '\r' | sed -n 's/^role://p')
port=$(redis_cli -p "$HAPROXY_REDIS_PORT" config get port | tail -n 1)
[[ $role == master && 127.0.0.1:$port == "$master" ]] || die "redis: HAProxy's port reaches $role on $port, Sentinel says $master"
echo "redis: sentinel master $master, reached through HAProxy's port $HAPROXY_REDIS_PORT"

# The API: a merchant, then a test charge through HAProxy.
acct=$CLUSTER_DIR/smoke-account.json
if [[ ! -s $acct ]]; then
	pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	(
		umask 077
		QUITA_ACCOUNT_PASSWORD=$pw "$QUITAD" account create --name 'Loja Cluster' \
			--email "cluster-$(date +%s)@quita.test" >"$acct.tmp" 2>>"$LOG_DIR/admin.log"
	)
	mv "$acct.tmp" "$acct"
	echo "api: created merchant $(json_field accountId <"$acct") (keys in $acct)"
fi
key=$(json_field testKey <"$acct")
[[ -n $key ]] || die "api: no testKey in $acct"
out=$(curl -s -w '\n%{http_code}' --max-time 10 "$HTTP_URL/v1/charges" \
	-H "apikey: $key" -H "Idempotency-Key: $token" -H 'Content-Type: application/json' \
	-d '{"amount": 1990, "payment_method": "pix", "description": "cluster smoke"}')
code=${out##*$'\n'}
charge=$(json_field id <<<"${out%$'\n'*}")
[[ $code == 201 && $charge == ch_* ]] || die "api: POST /v1/charges answered $code"
status=$(curl -s --max-time 10 "$HTTP_URL/v1/charges/$charge" -H "apikey: $key" | json_field status)
echo "api: created $charge through $HTTP_URL (201), read back: $status"
echo "smoke: ok"
