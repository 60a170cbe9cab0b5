#!/bin/bash
# tests/ceph/ceph_lib.sh - what every RBD test starts with: tests/lib.sh,
# the cluster run.sh started ($C, its ceph.conf), root, the oracle, the
# images a test owns, and the guard around every e2trim run.
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

# rbd_gone NAME: image rbd/NAME removed with whatever a failed run left on
# it (another client's lock, protected snapshots); nothing if it is absent
rbd_gone() {
	local n=rbd/$1 id locker s
	rbd -c "$C" info "$n" >/dev/null 2>&1 || return 0
	rbd -c "$C" lock ls --format json "$n" 2>/dev/null | python3 -c 'import json,sys
for l in json.load(sys.stdin) or []: print(l["id"] + "\t" + l["locker"])' |
		while IFS=$'\t' read -r id locker; do
			rbd -c "$C" lock rm "$n" "$id" "$locker" >/dev/null 2>&1
		done
	for s in $(rbd -c "$C" snap ls --format json "$n" 2>/dev/null |
		python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)))'); do
		rbd -c "$C" snap unprotect "$n@$s" >/dev/null 2>&1
	done
	rbd -c "$C" snap purge --no-progress "$n" >/dev/null 2>&1
	rbd -c "$C" rm --no-progress "$n" >/dev/null 2>&1
}

# own_images NAME...: the images (in pool rbd, clones before their
# parents) this test makes: removed now, whatever an earlier run that
# failed left behind, and again when the test exits, pass or fail, so
# that no test (nor the next mutant of make mutate-code-ceph) finds one
OWN_IMAGES=()
own_images() {
	local n
	OWN_IMAGES+=("$@")
	for n in "$@"; do rbd_gone "$n"; done
}
# shellcheck disable=SC2317  # called by the trap
ceph_exit() {
	local rc=${1:-$?} n
	# the test's servers first (cleanup()), so that nothing watches them
	cleanup
	for n in "${OWN_IMAGES[@]}"; do rbd_gone "$n"; done
	exit "$rc"
}
trap ceph_exit EXIT

# The guard: every e2trim a Ceph test runs goes through timeout(1), so
# that a run blocked for ever in librbd (a lock request that is never
# answered) ends the test with a message instead of hanging the suite.
# Generous (CEPH_E2TRIM_GUARD seconds, 600): never a timing assertion.
# timeout passes SIGTERM and SIGINT on to e2trim, so a test's kill -TERM
# reaches it.  E2TRIM_RUNS (tests/mutate-code/run.py), a folder: a line
# in E2TRIM_RUNS/TEST for each run of e2trim by TEST, so that a test
# that failed before e2trim ever ran is not counted as a kill.
E2TRIM_REAL=$E2TRIM
E2TRIM=$T/e2trim-guarded
cat >"$E2TRIM" <<GUARD
#!/bin/bash
[ -z "\${E2TRIM_RUNS:-}" ] || echo "\$*" >>"\$E2TRIM_RUNS/$(basename "$0" .sh)"
exec timeout --kill-after=30 ${CEPH_E2TRIM_GUARD:-600} "$E2TRIM_REAL" "\$@"
GUARD
chmod +x "$E2TRIM"
# assert_rc EXPECTED WHAT: as lib.sh's, naming the guard when it stopped e2trim
assert_rc() {
	if [ "$RC" != "$1" ] && { [ "$RC" = 124 ] || [ "$RC" = 137 ]; }; then
		cat "$ERR" >&2
		fail "$2: e2trim was stopped by the guard (exit $RC: still running ${CEPH_E2TRIM_GUARD:-600} s after it started, or 30 s after a signal it did not obey): it hangs"
	fi
	[ "$RC" = "$1" ] || { cat "$ERR" >&2; fail "$2: exit $RC, expected $1"; }
}
