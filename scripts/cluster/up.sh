#!/usr/bin/env bash
# Brings up (or completes) the local highly available cluster that
# docs/cluster.md describes: etcd, three PostgreSQL 15 members under Patroni
# with synchronous replication, HAProxy, Redis with a replica and three
# sentinels, and three quitad processes behind HAProxy. Idempotent: what
# already runs (by the PIDs recorded in run/) is kept, what is missing or
# dead is started again on its data, so it also restarts a killed member.
#
#   scripts/cluster/up.sh            everything (make cluster)
#   scripts/cluster/up.sh --no-build keep the quitad binary already built
#
# Everything lives under $QUITA_CLUSTER_DIR (default ./.cluster); the
# machine's own PostgreSQL (5432) and Redis (6379) are never touched.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build=true
[[ ${1:-} == --no-build ]] && build=false

# ---------------------------------------------------------------- packages

# Debian starts a package's service on install unless policy-rc.d says
# no: a temporary one that exits 101 keeps etcd (2379), redis-sentinel
# (26379) and haproxy from starting on their default ports.
ensure_packages() {
	local missing=()
	command -v patroni >/dev/null || missing+=(patroni)
	command -v patronictl >/dev/null || missing+=(patroni)
	command -v etcd >/dev/null || missing+=(etcd-server)
	command -v etcdctl >/dev/null || missing+=(etcd-client)
	command -v haproxy >/dev/null || missing+=(haproxy)
	command -v redis-server >/dev/null || missing+=(redis-server)
	command -v redis-sentinel >/dev/null || missing+=(redis-sentinel)
	command -v redis-cli >/dev/null || missing+=(redis-tools)
	command -v psql >/dev/null || missing+=(postgresql-client)
	command -v curl >/dev/null || missing+=(curl)
	command -v jq >/dev/null || missing+=(jq)
	[[ -x $PG_BIN/postgres ]] || missing+=(postgresql-15)
	((${#missing[@]} == 0)) && return 0
	[[ $EUID -eq 0 ]] || die "missing packages ${missing[*]}: run as root, or install them first"
	local policy=/usr/sbin/policy-rc.d ours=false
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\n# scripts/cluster/up.sh: no service starts during install\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		ours=true
	elif ! grep -q 'exit 101' "$policy"; then
		log "warning: $policy exists and may let the packages start their services; they are stopped after install"
	fi
	log "installing ${missing[*]}"
	local status=0
	DEBIAN_FRONTEND=noninteractive apt-get update -q || status=$?
	if ((status == 0)); then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" || status=$?
	fi
	$ours && rm -f "$policy"
	((status == 0)) || die "apt-get failed ($status)"
	# Whatever started anyway is the packages' services, not ours.
	local svc
	for svc in etcd patroni haproxy redis-sentinel; do
		if service "$svc" status >/dev/null 2>&1; then
			log "stopping the $svc service the package started"
			service "$svc" stop >/dev/null 2>&1 || true
		fi
	done
}

# port_free NAME PORT: PORT is free, or held by NAME's recorded process.
port_free() {
	local name=$1 port=$2
	alive "$name" && return 0
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "port $port (for $name) is taken by another process: set another port (scripts/cluster/lib.sh)"
	fi
}

# ------------------------------------------------------------------- etcd

start_etcd() {
	alive etcd && return 0
	port_free etcd "$ETCD_CLIENT_PORT"
	port_free etcd "$ETCD_PEER_PORT"
	mkdir -p "$CLUSTER_DIR/etcd"
	local state=new
	[[ -d $CLUSTER_DIR/etcd/data/member ]] && state=existing
	log "starting etcd on 127.0.0.1:$ETCD_CLIENT_PORT"
	launch etcd "$CLUSTER_DIR/etcd" etcd \
		--name etcd1 --data-dir "$CLUSTER_DIR/etcd/data" \
		--listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
		--advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "etcd1=http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster-token quita-cluster --initial-cluster-state "$state"
}

etcd_healthy() { ETCDCTL_API=3 etcdctl --dial-timeout 1s --command-timeout 2s --endpoints "127.0.0.1:$ETCD_CLIENT_PORT" endpoint health; }

# --------------------------------------------------------------- Patroni

# shellcheck disable=SC2034 # the locals are read by render
render_patroni() {
	local i=$1 dir=$CLUSTER_DIR/pg$1
	mkdir -p "$dir"
	local MEMBER=pg$i MEMBER_DIR=$dir DATA_DIR=$dir/data
	local PG_PORT=${PG_PORTS[i - 1]} REST_PORT=${PATRONI_PORTS[i - 1]}
	render "$CLUSTER_TEMPLATES/patroni.yml.in" "$dir/patroni.yml"
	chmod 700 "$dir"
	[[ $EUID -eq 0 ]] && chown -R "$PG_OS_USER:" "$dir"
	return 0
}

start_patroni() {
	local i=$1
	alive "pg$i" && return 0
	port_free "pg$i" "${PG_PORTS[i - 1]}"
	port_free "pg$i" "${PATRONI_PORTS[i - 1]}"
	render_patroni "$i"
	log "starting Patroni member pg$i (postgres 127.0.0.1:${PG_PORTS[i - 1]}, REST 127.0.0.1:${PATRONI_PORTS[i - 1]})"
	launch "pg$i" "$CLUSTER_DIR/pg$i/patroni.yml" "${AS_PG_USER[@]}" patroni "$CLUSTER_DIR/pg$i/patroni.yml"
}

# A leader that answers /primary and a synchronous standby.
patroni_ready() {
	local roles
	roles=$(timeout 5 patronictl -c "$CLUSTER_DIR/pg1/patroni.yml" list -f json 2>/dev/null) || return 1
	grep -q '"Role": "Leader"' <<<"$roles" && grep -q '"Role": "Sync Standby"' <<<"$roles"
}

# ------------------------------------------------------------------ HAProxy

# shellcheck disable=SC2034 # the locals are read by render
start_haproxy() {
	alive haproxy && return 0
	local p
	for p in "$HAPROXY_PG_WRITE_PORT" "$HAPROXY_PG_READ_PORT" "$HAPROXY_REDIS_PORT" "$HAPROXY_HTTP_PORT" "$HAPROXY_STATS_PORT"; do
		port_free haproxy "$p"
	done
	mkdir -p "$CLUSTER_DIR/haproxy"
	local PG1_PORT=${PG_PORTS[0]} PG2_PORT=${PG_PORTS[1]} PG3_PORT=${PG_PORTS[2]}
	local REST1_PORT=${PATRONI_PORTS[0]} REST2_PORT=${PATRONI_PORTS[1]} REST3_PORT=${PATRONI_PORTS[2]}
	local REDIS1_PORT=${REDIS_PORTS[0]} REDIS2_PORT=${REDIS_PORTS[1]}
	local Q1_PORT=${QUITAD_PORTS[0]} Q2_PORT=${QUITAD_PORTS[1]} Q3_PORT=${QUITAD_PORTS[2]}
	local cfg=$CLUSTER_DIR/haproxy/haproxy.cfg
	render "$CLUSTER_TEMPLATES/haproxy.cfg.in" "$cfg"
	haproxy -c -q -f "$cfg" || die "haproxy: $cfg does not validate"
	log "starting HAProxy (pg write $HAPROXY_PG_WRITE_PORT, pg read $HAPROXY_PG_READ_PORT, redis $HAPROXY_REDIS_PORT, http $HAPROXY_HTTP_PORT)"
	launch haproxy "$cfg" haproxy -db -f "$cfg"
}

pg_write_ready() { psql "postgres://postgres@127.0.0.1:$HAPROXY_PG_WRITE_PORT/postgres?sslmode=disable&connect_timeout=2" -XAtqc 'SELECT NOT pg_is_in_recovery()' | grep -qx t; }

ensure_database() {
	local admin="postgres://postgres@127.0.0.1:$HAPROXY_PG_WRITE_PORT/postgres?sslmode=disable"
	if [[ -z $(psql "$admin" -XAtqc "SELECT 1 FROM pg_database WHERE datname = '$PG_DATABASE'") ]]; then
		log "creating database $PG_DATABASE"
		psql "$admin" -XAtqc "CREATE DATABASE $PG_DATABASE" >/dev/null
	fi
}

# ------------------------------------------------------------------- Redis

# shellcheck disable=SC2034 # the locals are read by render
start_redis() {
	local i=$1 name=redis$1 dir=$CLUSTER_DIR/redis$1
	alive "$name" && return 0
	port_free "$name" "${REDIS_PORTS[i - 1]}"
	mkdir -p "$dir"
	if [[ ! -f $dir/redis.conf ]]; then
		local REDIS_NAME=$name REDIS_PORT=${REDIS_PORTS[i - 1]} REDIS_DIR=$dir REDIS_REPLICAOF=''
		((i > 1)) && REDIS_REPLICAOF="replicaof 127.0.0.1 ${REDIS_PORTS[0]}"
		render "$CLUSTER_TEMPLATES/redis.conf.in" "$dir/redis.conf"
	fi
	# A master that Sentinel replaced while it was down comes back as the
	# new master's replica, never as a second master: its file still says
	# it is one, and HAProxy's Redis port would send writes to it until
	# Sentinel noticed.
	local args=() master
	master=$(sentinel_master || true)
	if [[ -n $master && $master != "127.0.0.1 ${REDIS_PORTS[i - 1]}" ]]; then
		read -ra args <<<"--replicaof $master"
	fi
	log "starting $name on 127.0.0.1:${REDIS_PORTS[i - 1]}${args[*]:+ as a replica of ${master// /:}}"
	# Redis renames its process to "redis-server 127.0.0.1:PORT".
	launch "$name" "127.0.0.1:${REDIS_PORTS[i - 1]}" redis-server "$dir/redis.conf" "${args[@]}"
}

# shellcheck disable=SC2034 # the locals are read by render
start_sentinel() {
	local i=$1 name=sentinel$1 dir=$CLUSTER_DIR/sentinel$1
	alive "$name" && return 0
	port_free "$name" "${SENTINEL_PORTS[i - 1]}"
	mkdir -p "$dir"
	if [[ ! -f $dir/sentinel.conf ]]; then
		local SENTINEL_NAME=$name SENTINEL_PORT=${SENTINEL_PORTS[i - 1]} SENTINEL_DIR=$dir REDIS1_PORT=${REDIS_PORTS[0]}
		render "$CLUSTER_TEMPLATES/sentinel.conf.in" "$dir/sentinel.conf"
	fi
	log "starting $name on 127.0.0.1:${SENTINEL_PORTS[i - 1]}"
	launch "$name" "127.0.0.1:${SENTINEL_PORTS[i - 1]}" redis-sentinel "$dir/sentinel.conf"
}

# sentinel_master: "HOST PORT" of the master as the first sentinel that
# answers knows it.
sentinel_master() {
	local port out
	for port in "${SENTINEL_PORTS[@]}"; do
		out=$(timeout 2 redis-cli -h 127.0.0.1 -p "$port" sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>/dev/null | paste -sd ' ') || continue
		[[ $out =~ ^[0-9.]+\ [0-9]+$ ]] && printf '%s' "$out" && return 0
	done
	return 1
}

sentinel_answers() { [[ -n $(timeout 2 redis-cli -h 127.0.0.1 -p "${SENTINEL_PORTS[0]}" sentinel get-master-addr-by-name "$SENTINEL_MASTER") ]]; }
redis_master_ready() { [[ $(timeout 2 redis-cli -h 127.0.0.1 -p "$HAPROXY_REDIS_PORT" ping 2>/dev/null) == PONG ]]; }

# ------------------------------------------------------------------ quitad

# The settings every quitad of the cluster shares, one NAME=VALUE a line,
# kept in quitad.env (0600: it holds the dashboard token secret) so that
# the admin commands of quitad.sh and the chaos suite use the same. It is
# written on every start, keeping the secret of the file it replaces, so a
# restarted quitad takes the current settings and every token stays valid.
# QUITA_WEBHOOK_ALLOW_PRIVATE lets webhooks reach a receiver on loopback
# (the chaos suite's): this cluster is for development only.
write_quitad_env() {
	local f=$CLUSTER_DIR/quitad.env secret=''
	[[ -f $f ]] && secret=$(sed -n 's/^QUITA_JWT_SECRET=//p' "$f")
	[[ -n $secret ]] || secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
	(
		umask 077
		cat >"$f.tmp" <<-ENV
			QUITA_DATABASE_URL=$PG_WRITE_URL
			QUITA_DATABASE_READ_URL=$PG_READ_URL
			QUITA_REDIS_URL=$SENTINEL_URL
			QUITA_BASE_URL=$HTTP_URL/v1
			QUITA_CHECKOUT_URL_BASE=$HTTP_URL/checkout
			QUITA_TRUSTED_PROXIES=127.0.0.1/32
			QUITA_ACQUIRER=sandbox
			QUITA_SEED_DEMO=false
			QUITA_WEBHOOK_ALLOW_PRIVATE=true
			QUITA_LOG_LEVEL=info
			QUITA_JWT_SECRET=$secret
		ENV
	)
	mv "$f.tmp" "$f"
}

# cluster.env: the cluster's addresses for tools, one NAME=VALUE a line
# (no secret): the chaos suite's cluster mode reads it.
write_cluster_env() {
	cat >"$CLUSTER_DIR/cluster.env.tmp" <<-ENV
		CLUSTER_HTTP_URL=$HTTP_URL
		CLUSTER_PG_WRITE_URL=$PG_WRITE_URL
		CLUSTER_PG_READ_URL=$PG_READ_URL
		CLUSTER_REDIS_URL=$SENTINEL_URL
		CLUSTER_REDIS_HAPROXY_URL=$REDIS_URL
		CLUSTER_QUITAD_BIN=$CLUSTER_DIR/bin/quitad
		CLUSTER_QUITAD_ENV=$CLUSTER_DIR/quitad.env
		CLUSTER_QUITAD_URLS=$(printf 'http://127.0.0.1:%s ' "${QUITAD_PORTS[@]}" | sed 's/ $//')
		CLUSTER_PATRONI_URLS=$(printf 'http://127.0.0.1:%s ' "${PATRONI_PORTS[@]}" | sed 's/ $//')
		CLUSTER_FAULT_SCRIPT=$CLUSTER_REPO/scripts/cluster/fault.sh
		CLUSTER_LOG_DIR=$LOG_DIR
	ENV
	mv "$CLUSTER_DIR/cluster.env.tmp" "$CLUSTER_DIR/cluster.env"
}

start_quitad() {
	local i=$1 name=q$1
	alive "$name" && return 0
	port_free "$name" "${QUITAD_PORTS[i - 1]}"
	log "starting quitad $name on 127.0.0.1:${QUITAD_PORTS[i - 1]}"
	local addr=127.0.0.1:${QUITAD_PORTS[i - 1]}
	launch "$name" "quitad serve -addr $addr" "$CLUSTER_REPO/scripts/cluster/quitad.sh" serve -addr "$addr"
}

quitad_healthy() { curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$1/healthz"; }

# ------------------------------------------------------------------- main

ensure_packages
mkdir -p "$CLUSTER_DIR" "$RUN_DIR" "$LOG_DIR" "$CLUSTER_DIR/bin"
# The Postgres members run as another user, who must reach their folders.
[[ $EUID -eq 0 ]] && chmod 755 "$CLUSTER_DIR"

start_etcd
wait_until 30 etcd etcd_healthy

for i in 1 2 3; do start_patroni "$i"; done
start_haproxy
wait_until 120 'Patroni leader and synchronous standby' patroni_ready
wait_until 30 "Postgres primary through HAProxy's write port" pg_write_ready
ensure_database

for i in 1 2; do start_redis "$i"; done
for i in 1 2 3; do start_sentinel "$i"; done
wait_until 30 'Sentinel' sentinel_answers
wait_until 30 "Redis master through HAProxy's redis port" redis_master_ready

write_quitad_env
write_cluster_env
if $build || [[ ! -x $CLUSTER_DIR/bin/quitad ]]; then
	log "building quitad"
	(cd "$CLUSTER_REPO" && go build -o "$CLUSTER_DIR/bin/quitad" ./cmd/quitad)
fi
"$CLUSTER_REPO/scripts/cluster/quitad.sh" migrate 2>>"$LOG_DIR/migrate.log"
for i in 1 2 3; do start_quitad "$i"; done
for i in 1 2 3; do wait_until 60 "quitad q$i" quitad_healthy "${QUITAD_PORTS[i - 1]}"; done
wait_until 10 "quitad through HAProxy" curl -sf -o /dev/null --max-time 2 "$HTTP_URL/healthz"

cat <<EOF

Quita HA cluster is up (data and logs in $CLUSTER_DIR)
  API (HAProxy -> q1..q3)    $HTTP_URL/v1
  Postgres writes (primary)  $PG_WRITE_URL
  Postgres reads (replicas)  $PG_READ_URL (the primary while no replica is up)
  Redis (Sentinel, quitad's) $SENTINEL_URL
  Redis master (HAProxy)     $REDIS_URL
  Settings                   $CLUSTER_DIR/quitad.env, addresses in $CLUSTER_DIR/cluster.env
  HAProxy statistics         http://127.0.0.1:$HAPROXY_STATS_PORT/
  Patroni REST               $(printf '127.0.0.1:%s ' "${PATRONI_PORTS[@]}")
  etcd                       127.0.0.1:$ETCD_CLIENT_PORT
  quitad admin commands      scripts/cluster/quitad.sh account create --name ... --email ... --password-stdin
Status: make cluster-status    Tear down: make cluster-down (data kept; CLUSTER_WIPE=1 deletes it)
EOF
