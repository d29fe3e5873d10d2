#!/usr/bin/env bash
# Enforces the direction of imports between Quita's layers (docs: DESIGN.md,
# "Architecture"): domain ← ports ← app ← adapters ← cmd.
#
#   domain/...  standard library only (and other domain packages)
#   ports/...   standard library, domain/... (and other ports packages)
#   app/...     anything except adapters/... and cmd/...
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

# why_forbidden LAYER IMPORT prints why IMPORT is forbidden in LAYER, or nothing.
why_forbidden() {
	local layer=$1 imp=$2
	case $layer in
	domain)
		is_std "$imp" || under "$imp" domain ||
			echo "domain may import only the standard library"
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
	esac
}

offenders=()
checked=0

for layer in domain ports app; do
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
			reason=$(why_forbidden "$layer" "$imp")
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
