#!/bin/bash
# tests/abi_check.sh [--update] LIB BASELINE - libe2trim's ABI against the
# last release's (make check-abi; make abi-baseline writes it)
#
# BASELINE is abidw's dump (libabigail, Debian abigail-tools) of the last
# release's libe2trim.so, its public types only (those of e2trim.h and
# e2trim_err.h).  abidiff compares LIB with it; symbols added are fine,
# any change to a symbol or type that was there (one removed, a struct
# member moved, a struct a caller allocates grown) is incompatible and
# fails, unless LIB's soname is no longer the baseline's (the major was
# bumped: then refresh the baseline).  Also: LIB exports exactly the
# functions e2trim.h declares, and compile_et's table.
set -u
update=
[ "${1:-}" = --update ] && { update=1; shift; }
lib=${1:?LIB}
base=${2:?BASELINE}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
supp=$here/abi/libe2trim.abignore
fail() { echo "abi_check: $*" >&2; exit 1; }

for t in abidw abidiff; do
	command -v $t >/dev/null || fail "$t not installed: make deps (Debian abigail-tools)"
done
hdr=$(mktemp -d /tmp/e2trim-abi.XXXXXX)
trap 'rm -rf "$hdr"' EXIT
cp "$top/src/e2trim.h" "$(dirname "$lib")/e2trim_err.h" "$hdr/" || fail "no headers"

# exported: the header's functions and the error table, no more, no fewer
declared=$(grep -oE '\be2trim_[a-z_0-9]+\(' "$top/src/e2trim.h" | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBW]$/ {print $3}' | sed 's/@.*//' |
	grep -vxE 'initialize_e2tr_error_table(_r)?|et_e2tr_error_table' | sort -u)
[ "$declared" = "$exported" ] || {
	diff <(echo "$declared") <(echo "$exported") | sed 's/^</  declared, not exported:/; s/^>/  exported, not declared:/' | grep '^  '
	fail "$lib: exports differ from e2trim.h (add new calls to src/libe2trim.map, in the new release's node)"
}

dump() { abidw --headers-dir "$hdr" --drop-private-types --no-corpus-path --no-comp-dir-path "$@"; }
if [ -n "$update" ]; then
	dump --out-file "$base" "$lib" || fail "abidw failed (is LIB built with -g?)"
	echo "abi_check: wrote $base ($(sed -n "s/.*soname='\([^']*\)'.*/\1/p" "$base" | head -1))"
	exit 0
fi
[ -f "$base" ] || fail "no baseline $base: make abi-baseline"
soname_of() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p'; }
now=$(soname_of "$lib")
was=$(sed -n "s/.*soname='\([^']*\)'.*/\1/p" "$base" | head -1)
rc=0
abidiff --no-added-syms --suppressions "$supp" --headers-dir1 "$hdr" --headers-dir2 "$hdr" \
	"$base" "$lib" >"$hdr/report" 2>&1 || rc=$?
if [ $((rc & 3)) != 0 ]; then
	cat "$hdr/report"
	fail "abidiff could not compare (exit $rc)"
fi
if [ $((rc & 12)) = 0 ]; then
	echo "abi_check: $now: compatible with the baseline ($(basename "$base"), $was)"
	exit 0
fi
cat "$hdr/report"
[ "$now" != "$was" ] && {
	echo "abi_check: incompatible with $was, but the soname is now $now: refresh the baseline (make abi-baseline) with the release"
	exit 0
}
fail "$now: an incompatible ABI change without a soname bump (above); undo it, or bump SO_VERSION and the version, then make abi-baseline"
