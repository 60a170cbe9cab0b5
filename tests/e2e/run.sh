#!/bin/bash
# tests/e2e/run.sh - run every end-to-end test, print one line each and
# the totals.  Under CI=true a skipped test counts as failed: CI runs as
# root with loop devices, so nothing there has a reason to skip.
# TESTS_DIR: run the t_*.sh of that folder instead (tests/ceph/run.sh
# does, once its cluster is up); SHOW_NOTES=1: a passed test's notes too.
set -u
here=${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
: "${E2TRIM:?E2TRIM must name the e2trim binary}"
export E2TRIM
pass=0 failed=0 skipped=0
only=${1:-}
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	[ -z "$only" ] || [[ "$name" == *$only* ]] || continue
	T=$(mktemp -d "/tmp/e2trim-$name.XXXXXX")
	start=$(date +%s)
	T=$T bash "$t" >"$T.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc = 0 ]; then
		pass=$((pass + 1)); echo "PASS $name (${secs}s)"
		[ -z "${SHOW_NOTES:-}" ] || grep '^  ' "$T.log" | sed 's/^/  | /'
	elif [ $rc = 77 ] && [ "${CI:-}" != true ]; then
		skipped=$((skipped + 1)); echo "SKIP $name: $(grep SKIP "$T.log" | tail -1)"
	else
		failed=$((failed + 1)); echo "FAIL $name (exit $rc)"
		[ $rc = 77 ] && echo "  skipped under CI=true, which counts as a failure"
		sed 's/^/  | /' "$T.log" | tail -25
	fi
	rm -rf "$T" "$T.log"
done
echo "$pass passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
