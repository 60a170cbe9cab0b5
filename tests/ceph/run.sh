#!/bin/bash
# tests/ceph/run.sh - the RBD tests on a real one-node Ceph cluster.
#
# Starts the cluster (cluster.sh) in a temporary folder, runs every
# tests/ceph/t_*.sh with CEPH_CONF naming it, and stops every daemon by
# its PID at the end, pass or fail.  Like tests/e2e/run.sh: one line per
# test, 77 is a skip, and under CI=true a skip counts as a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${E2TRIM:?E2TRIM must name the e2trim binary}"
export E2TRIM
# nbdsh and qemu's tools from the system, not a python or qemu on PATH first
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

skip_all() {
	echo "SKIP tests/ceph: $*"
	[ "${CI:-}" != true ] || { echo "  skipped under CI=true, which counts as a failure"; exit 1; }
	exit 0
}
[ "$(id -u)" = 0 ] || skip_all "needs root (make deps-ceph installs ceph-mon, ceph-osd, ceph-common)"
for p in ceph-mon ceph-osd ceph rbd qemu-nbd qemu-img; do
	command -v "$p" >/dev/null || skip_all "$p is missing: make deps-ceph"
done

D=$(mktemp -d /tmp/e2trim-ceph.XXXXXX)
stop_cluster() { bash "$here/cluster.sh" stop "$D/c"; rm -rf "$D"; }
trap stop_cluster EXIT
start=$(date +%s%N)
if ! CEPH_CONF=$(bash "$here/cluster.sh" start "$D/c" 2>"$D/start.log"); then
	echo "FAIL cluster start"; sed 's/^/  | /' "$D/start.log" | tail -20
	exit 1
fi
export CEPH_CONF CEPH_DIR=$D/c
echo "cluster up in $(( ($(date +%s%N) - start) / 1000000 )) ms"

pass=0 failed=0 skipped=0
only=${1:-}
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	[ -z "$only" ] || [[ "$name" == *$only* ]] || continue
	T=$(mktemp -d "/tmp/e2trim-$name.XXXXXX")
	s=$(date +%s)
	T=$T bash "$t" >"$T.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - s ))
	if [ $rc = 0 ]; then
		pass=$((pass + 1)); echo "PASS $name (${secs}s)"
		grep '^  ' "$T.log" | sed 's/^/  | /'
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
