#!/bin/bash
# tests/boot/run.sh DEBDIR - boot Debian's kernel under QEMU with each of
# e2trim's boot integrations, installed from the package built in DEBDIR
# (make deb), and print one line per test and the totals.  Like
# tests/e2e/run.sh: exit 77 is a skip, and a failure under CI=true.
# ONLY=substring runs only the tests whose name has it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
debdir=${1:?usage: run.sh DEBDIR}
debs=("$debdir"/e2trim_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || { echo "no e2trim_*.deb in $debdir (make deb)" >&2; exit 1; }

# The staging root: what the package installs, nowhere else.
STAGE=$(mktemp -d /tmp/e2trim-boot-stage.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
dpkg-deb -x "$deb" "$STAGE" || exit 1
export DEB=$deb STAGE E2TRIM=$STAGE/usr/sbin/e2trim

pass=0 failed=0 skipped=0
all_start=$(date +%s)
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	[ -z "${ONLY:-}" ] || [[ "$name" == *$ONLY* ]] || continue
	T=$(mktemp -d "/tmp/e2trim-$name.XXXXXX")
	start=$(date +%s)
	T=$T bash "$t" >"$T.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		echo "PASS $name (${secs}s)"
		grep '^  ' "$T.log"
	elif [ $rc = 77 ] && [ "${CI:-}" != true ]; then
		skipped=$((skipped + 1))
		echo "SKIP $name: $(grep SKIP "$T.log" | tail -1)"
	else
		failed=$((failed + 1))
		echo "FAIL $name (exit $rc, ${secs}s)"
		[ $rc = 77 ] && echo "  skipped under CI=true, which counts as a failure"
		sed 's/^/  | /' "$T.log" | tail -40
	fi
	rm -rf "$T" "$T.log"
done
echo "$pass passed, $failed failed, $skipped skipped ($(($(date +%s) - all_start))s)"
[ $failed = 0 ]
