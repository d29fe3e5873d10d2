#!/usr/bin/env bash
# Makes sure the PostgreSQL and Redis that the integration tests use are up:
#   PostgreSQL  127.0.0.1:5432, trust auth, user postgres
#   Redis       127.0.0.1:6379, nothing kept on disk
# A service that already answers is left alone, so this is quick and safe to
# run before every `make test`. One that does not is started, and installed
# from Debian's packages first when missing. Nothing is ever stopped. The
# tools some tests drive (Chromium for the browser tests, poppler-utils for
# the receipt tests) are installed when missing, too. With --bench, so is
# wrk, which drives the benchmark's closed loop (cmd/quitabench).
set -euo pipefail

bench=false
[[ ${1:-} == --bench ]] && bench=true

readonly PG_HOST=127.0.0.1 PG_PORT=5432
readonly REDIS_HOST=127.0.0.1 REDIS_PORT=6379
readonly WAIT_SECONDS=30

log() { printf 'services: %s\n' "$*" >&2; }

as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		log "need root for: $*"
		return 1
	fi
}

apt_updated=false
apt_install() {
	if ! $apt_updated; then
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q || return 1
		apt_updated=true
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" || return 1
}

pg_up() { command -v pg_isready >/dev/null && pg_isready -q -h "$PG_HOST" -p "$PG_PORT"; }

# redis-cli exits 0 on some errors (e.g. NOAUTH), so look at the answer.
redis_up() {
	command -v redis-cli >/dev/null &&
		[[ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]
}

# wait_for NAME CHECK: polls CHECK once a second for up to WAIT_SECONDS.
wait_for() {
	local name=$1 check=$2 i
	for ((i = 0; i < WAIT_SECONDS; i++)); do
		"$check" && return 0
		sleep 1
	done
	"$check" && return 0
	log "$name did not answer within ${WAIT_SECONDS}s"
	return 1
}

# shellcheck disable=SC2012 # version directories are plain numbers
pg_version_dir() { ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1; }

# Trust for local connections only: this is a development and CI database.
# Prepended, because in pg_hba.conf the first matching line wins.
pg_trust_local() {
	local hba=$1 marker='# quita scripts/services.sh: trust local connections' tmp
	as_root grep -qF "$marker" "$hba" && return 0
	log "configuring trust auth in $hba"
	tmp=$(mktemp)
	{
		printf '%s\n' "$marker" \
			'local   all all              trust' \
			'host    all all 127.0.0.1/32 trust' \
			'host    all all ::1/128      trust' ''
		as_root cat "$hba"
	} >"$tmp" || return 1
	# cp onto the existing file keeps its owner and mode.
	as_root cp "$tmp" "$hba" || return 1
	rm -f "$tmp"
}

# The ensure_* functions run as `if` conditions, where set -e does not apply:
# hence the explicit `|| return 1` on every step that must not fail.
ensure_postgres() {
	pg_up && return 0

	local installed_now=false version
	version=$(pg_version_dir)
	if [[ -z $version ]] || ! command -v pg_ctlcluster >/dev/null; then
		log "PostgreSQL not installed; installing from apt"
		apt_install postgresql || return 1
		installed_now=true
		version=$(pg_version_dir)
	fi
	if [[ -z $version ]]; then
		log "no PostgreSQL version under /etc/postgresql after install"
		return 1
	fi
	if [[ ! -d /etc/postgresql/$version/main ]]; then
		log "creating cluster $version/main"
		as_root pg_createcluster --port "$PG_PORT" "$version" main || return 1
	fi
	if $installed_now; then
		pg_trust_local "/etc/postgresql/$version/main/pg_hba.conf" || return 1
	fi

	if as_root pg_ctlcluster --skip-systemctl-redirect "$version" main status >/dev/null 2>&1; then
		# Running (the package's postinst may have started it) but not
		# answering on TCP yet, or needing the new pg_hba.conf.
		as_root pg_ctlcluster --skip-systemctl-redirect "$version" main reload || true
	else
		log "starting PostgreSQL $version/main"
		# A concurrent run may be starting it too; wait_for decides.
		as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
	fi
	wait_for PostgreSQL pg_up
}

ensure_redis() {
	redis_up && return 0

	if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
		log "Redis not installed; installing from apt"
		apt_install redis-server || return 1
		# The package may have started its own server on 6379.
		redis_up && return 0
	fi
	log "starting redis-server on $REDIS_HOST:$REDIS_PORT"
	redis-server --daemonize yes --bind "$REDIS_HOST" --port "$REDIS_PORT" \
		--save "" --appendonly no >/dev/null || true
	wait_for Redis redis_up
}

# Headless Chromium for the checkout page's browser tests (chromedp).
# Installed only when missing; nothing is started.
ensure_chromium() {
	command -v chromium >/dev/null && return 0
	log "chromium not installed; installing from apt"
	apt_install chromium || return 1
	command -v chromium >/dev/null
}

# poppler-utils (pdftotext, pdftoppm) for the receipt tests, which read the
# PDFs' text and render a page to PNG. Installed only when missing.
ensure_poppler() {
	command -v pdftotext >/dev/null && command -v pdftoppm >/dev/null && return 0
	log "poppler-utils not installed; installing from apt"
	apt_install poppler-utils || return 1
	command -v pdftotext >/dev/null && command -v pdftoppm >/dev/null
}

# wrk for the benchmark's closed loop (make bench). Installed only when
# missing; without it quitabench falls back to its own Go generator.
ensure_wrk() {
	command -v wrk >/dev/null && return 0
	log "wrk not installed; installing from apt"
	apt_install wrk || return 1
	command -v wrk >/dev/null
}

status=0

if ensure_postgres; then
	pg_ver=$(psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -d postgres -wXAtqc 'SHOW server_version' 2>/dev/null || echo '?')
	echo "postgres: up at $PG_HOST:$PG_PORT (server $pg_ver)"
else
	echo "postgres: DOWN at $PG_HOST:$PG_PORT"
	status=1
fi

if ensure_redis; then
	redis_ver=$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" info server 2>/dev/null |
		sed -n 's/^redis_version:\([^[:space:]]*\).*/\1/p')
	echo "redis:    up at $REDIS_HOST:$REDIS_PORT (server ${redis_ver:-?})"
else
	echo "redis:    DOWN at $REDIS_HOST:$REDIS_PORT"
	status=1
fi

if ensure_chromium; then
	echo "chromium: $(chromium --version 2>/dev/null || echo installed)"
else
	echo "chromium: MISSING (browser tests fail under CI=true)"
	status=1
fi

if ensure_poppler; then
	echo "poppler:  $(pdftotext -v 2>&1 | head -n 1)"
else
	echo "poppler:  MISSING (receipt tests fail under CI=true)"
	status=1
fi

if $bench; then
	if ensure_wrk; then
		echo "wrk:      $(wrk -v 2>&1 | head -n 1)"
	else
		echo "wrk:      MISSING (quitabench drives the closed loop with its own Go generator)"
	fi
fi

exit "$status"
