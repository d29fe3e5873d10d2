#!/usr/bin/env bash
# Runs the cluster's quitad binary with the cluster's settings
# ($QUITA_CLUSTER_DIR/quitad.env, written by up.sh): the servers up.sh
# starts, and admin commands against the cluster's database, e.g.
#
#   scripts/cluster/quitad.sh account create --name Loja --email you@example.com --password-stdin
#   scripts/cluster/quitad.sh ledger verify
#
# A setting of quitad.env wins over the same variable in the environment;
# others (QUITA_ACCOUNT_PASSWORD, say) pass through.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -f $CLUSTER_DIR/quitad.env && -x $CLUSTER_DIR/bin/quitad ]] || die "no cluster in $CLUSTER_DIR: run make cluster"
mapfile -t settings < <(grep -E '^QUITA_[A-Z0-9_]+=' "$CLUSTER_DIR/quitad.env")
exec env "${settings[@]}" "$CLUSTER_DIR/bin/quitad" "$@"
