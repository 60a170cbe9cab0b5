#!/bin/bash
# tests/ceph/ceph_lib.sh - what every RBD test starts with: tests/lib.sh,
# the cluster run.sh started ($C, its ceph.conf), root, and the oracle.
# shellcheck source-path=SCRIPTDIR/.. source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
: "${CEPH_CONF:?run through tests/ceph/run.sh}"
need_root
C=$CEPH_CONF

# du_exact IMAGE: the bytes Ceph counts for it, as rbd du --exact says
du_exact() {
	rbd -c "$C" du --exact --format json "$1" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["images"][-1]["used_size"])'
}
