#!/usr/bin/env bash
# The cluster at a glance (make cluster-status): each recorded process,
# Patroni's members (who is the leader, the synchronous standby, the lag),
# what HAProxy's ports reach, Sentinel's master and the replication of
# Redis.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

echo "== processes ($RUN_DIR)"
for name in etcd pg1 pg2 pg3 haproxy redis1 redis2 sentinel1 sentinel2 sentinel3 q1 q2 q3; do
	if alive "$name"; then
		printf '  %-10s running (pid %s)\n' "$name" "$(recorded_pid "$name")"
	else
		printf '  %-10s DOWN\n' "$name"
	fi
done

echo "== Patroni (patronictl list)"
patronictl_cmd list 2>&1 | sed 's/^/  /' || true

echo "== HAProxy"
q="SELECT inet_server_port() || CASE WHEN pg_is_in_recovery() THEN ' (replica, last replayed commit ' || coalesce(round(extract(epoch FROM now() - pg_last_xact_replay_timestamp())::numeric, 3)::text, '?') || 's ago)' ELSE ' (primary)' END"
for port in "$HAPROXY_PG_WRITE_PORT" "$HAPROXY_PG_READ_PORT"; do
	ans=$(psql "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable&connect_timeout=2" -XAtqc "$q" 2>&1 | head -n 1 || true)
	printf '  postgres port %s -> member on %s\n' "$port" "$ans"
done
primary=$(psql "postgres://postgres@127.0.0.1:$HAPROXY_PG_WRITE_PORT/postgres?sslmode=disable&connect_timeout=2" -XAtqc \
	"SELECT application_name || ' ' || sync_state || ' replay lag ' || pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)) FROM pg_stat_replication ORDER BY 1" 2>/dev/null || true)
if [[ -n $primary ]]; then
	echo "  replication as the primary sees it:"
	while IFS= read -r line; do printf '    %s\n' "$line"; done <<<"$primary"
fi
printf '  redis port %s -> %s\n' "$HAPROXY_REDIS_PORT" \
	"$(redis_cli -p "$HAPROXY_REDIS_PORT" info replication 2>&1 | grep -E '^(role|connected_slaves)' | tr -d '\r' | paste -sd ' ' || true)"
printf '  http port %s -> /healthz %s\n' "$HAPROXY_HTTP_PORT" \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$HTTP_URL/healthz" || true)"

echo "== Sentinel (master name $SENTINEL_MASTER)"
for port in "${SENTINEL_PORTS[@]}"; do
	printf '  sentinel %s: master %s\n' "$port" \
		"$(redis_cli -p "$port" sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>&1 | paste -sd : || true)"
done
for port in "${REDIS_PORTS[@]}"; do
	printf '  redis %s: %s\n' "$port" \
		"$(redis_cli -p "$port" info replication 2>&1 | grep -E '^(role|master_port|master_link_status|connected_slaves)' | tr -d '\r' | paste -sd ' ' || true)"
done
