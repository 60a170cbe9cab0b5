#!/bin/bash
# tests/ceph/run.sh - the RBD tests on a real one-node Ceph cluster.
#
# Starts the cluster (cluster.sh) in a temporary folder, runs every
# tests/ceph/t_*.sh with CEPH_CONF naming it, and stops every daemon by
# its PID at the end, pass or fail.  The tests run through tests/e2e/run.sh:
# one line per test, 77 is a skip, and under CI=true a skip counts as a
# failure.
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

# CEPH_TMPDIR: where the cluster's folder goes (/tmp; .ci/run: /dev/shm,
# so that the OSD's and the monitor's syncs do not queue behind what the
# sanitized pass beside it writes to the disk)
D=$(mktemp -d "${CEPH_TMPDIR:-/tmp}/e2trim-ceph.XXXXXX")
# shellcheck disable=SC2317  # called by the trap
stop_cluster() { bash "$here/cluster.sh" stop "$D/c"; rm -rf "$D"; }
trap stop_cluster EXIT
start=$(date +%s%N)
# with cephx, as production clusters run (t_rbd_cephx needs it); CEPH_AUTH=none
# for a cluster without
export CEPH_AUTH=${CEPH_AUTH:-cephx}
if ! CEPH_CONF=$(bash "$here/cluster.sh" start "$D/c" 2>"$D/start.log"); then
	echo "FAIL cluster start"; sed 's/^/  | /' "$D/start.log" | tail -20
	exit 1
fi
export CEPH_CONF CEPH_DIR=$D/c
echo "cluster up in $(( ($(date +%s%N) - start) / 1000000 )) ms"

# the same runner as the end-to-end tests, over this folder, one test at
# a time: they share the one cluster, and t_rbd_osd_killed stops its OSD
# (CEPH_JOBS=N runs N side by side, for tests that are made for it)
rc=0
TESTS_DIR=$here SHOW_NOTES=1 E2E_JOBS=${CEPH_JOBS:-1} bash "$here/../e2e/run.sh" "${1:-}" || rc=$?
# the target contract's RBD kinds (tests/contract/), in this cluster;
# run.sh NAME runs them only when NAME is "contract"
if [ -z "${1:-}" ] || [ "$1" = contract ]; then
	echo "== the target contract, RBD kinds (tests/contract/)"
	CONTRACT_KINDS=ceph bash "$here/../contract/run.sh" || rc=1
fi
exit "$rc"
