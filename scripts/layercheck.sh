#!/usr/bin/env bash
# Enforces the direction of imports between Quita's layers (docs/design.md,
# "Layers"): domain ← ports ← app ← adapters ← cmd.
#
#   domain/...    standard library only (and other domain packages)
#   client/...    standard library only: the Go SDK merchants import must
#                 not pull in the server (or anything else) with it
#   ports/...     standard library, domain/... (and other ports packages)
#   app/...       anything except adapters/... and cmd/...
#   adapters/...  no cmd/..., and no other adapter: adapters meet only
#                 through ports, wired in cmd. An adapter is adapters/X, or
#                 adapters/X/Y when adapters/X holds no Go file of its own
#                 (adapters/acquirer groups sandbox, bcbpix, modes); its
#                 sub-packages (bcbpix/pixsim) belong to it.
#
# So domain and ports can never pull in bun, go-redis, gorilla/mux, wire or
# any other third-party module. Only non-test files count (go list's
# .Imports): tests may reach outward, e.g. for fakes and contract suites.
# A layer with no packages yet is skipped. Exits 1 listing every offending
# import.
set -euo pipefail

cd "$(dirname "$0")/.."

readonly module=github.com/quitapix/quita

# is_std IMPORT: standard library paths have no dot in their first element.
is_std() {
	local first=${1%%/*}
	[[ $first != *.* ]]
}

# under IMPORT DIR: IMPORT is the module's package DIR or below it.
under() {
	[[ $1 == "$module/$2" || $1 == "$module/$2/"* ]]
}

# why_forbidden LAYER PKG IMPORT prints why IMPORT is forbidden in package
# PKG of LAYER, or nothing.
why_forbidden() {
	local layer=$1 pkg=$2 imp=$3
	case $layer in
	domain)
		is_std "$imp" || under "$imp" domain ||
			echo "domain may import only the standard library"
		;;
	client)
		is_std "$imp" || under "$imp" client ||
			echo "the SDK (client) may import only the standard library"
		;;
	ports)
		is_std "$imp" || under "$imp" domain || under "$imp" ports ||
			echo "ports may import only the standard library and domain"
		;;
	app)
		if under "$imp" adapters || under "$imp" cmd; then
			echo "app may not import adapters or cmd"
		fi
		;;
	adapters)
		if under "$imp" cmd; then
			echo "adapters may not import cmd"
		elif under "$imp" adapters && [[ $(adapter_of "${imp#"$module"/}") != $(adapter_of "${pkg#"$module"/}") ]]; then
			echo "an adapter may not import another adapter (meet through ports)"
		fi
		;;
	esac
}

# adapter_of DIR prints the adapter DIR (a package path below the module,
# adapters/...) belongs to: adapters/X, or adapters/X/Y when adapters/X is
# only a folder of adapters.
adapter_of() {
	local rest=${1#adapters/} first second
	first=${rest%%/*}
	if compgen -G "adapters/$first/*.go" >/dev/null || [[ $rest != */* ]]; then
		echo "adapters/$first"
		return
	fi
	second=${rest#*/}
	second=${second%%/*}
	echo "adapters/$first/$second"
}

offenders=()
checked=0

for layer in domain client ports app adapters; do
	if [[ ! -d $layer ]]; then
		echo "layercheck: $layer/ does not exist yet, skipped"
		continue
	fi

	# -e: a package that does not compile (yet) still lists its imports.
	errfile=$(mktemp)
	if ! listing=$(go list -e -f '{{.ImportPath}}:{{range .Imports}} {{.}}{{end}}' "./$layer/..." 2>"$errfile"); then
		cat "$errfile" >&2
		rm -f "$errfile"
		echo "layercheck: go list ./$layer/... failed" >&2
		exit 1
	fi
	grep -v 'matched no packages' "$errfile" >&2 || true
	rm -f "$errfile"

	while IFS= read -r line; do
		[[ -n $line ]] || continue
		pkg=${line%%:*}
		checked=$((checked + 1))
		read -ra imports <<<"${line#*:}"
		for imp in "${imports[@]}"; do
			reason=$(why_forbidden "$layer" "$pkg" "$imp")
			if [[ -n $reason ]]; then
				offenders+=("${pkg#"$module"/} imports $imp ($reason)")
			fi
		done
	done <<<"$listing"
done

if ((${#offenders[@]} > 0)); then
	echo "layercheck: ${#offenders[@]} forbidden import(s):" >&2
	printf '  %s\n' "${offenders[@]}" >&2
	exit 1
fi
echo "layercheck: ok ($checked package(s) checked)"
