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
# cluster_pause: every client's requests wait in the client (ceph osd
# pause), as with OSDs gone; cluster_unpause ends it, and so does the
# test's end, pass or fail, so that the next test finds a cluster that
# answers
PAUSED_OSD=
cluster_pause() {
	ceph -c "$C" osd pause >/dev/null 2>&1 || fail "ceph osd pause"
	PAUSED_OSD=1
}
# shellcheck disable=SC2317  # also called by the trap
cluster_unpause() {
	[ -z "$PAUSED_OSD" ] || ceph -c "$C" osd unpause >/dev/null 2>&1
	PAUSED_OSD=
}
# shellcheck disable=SC2317  # called by the trap
ceph_exit() {
	local rc=${1:-$?} n
	cluster_unpause
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
# reaches it (once timeout has run: e2trim_term where the order matters).  E2TRIM_RUNS (tests/mutate-code/run.py), a folder: a line
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

# --- what the tests of a stalled cluster share (t_rbd_watch_lost,
# t_rbd_unconfirmed, t_rbd_lock_stalled, t_rbd_stop_stalled) ---

# locks_of IMAGE: its locks, "ID<TAB>LOCKER" a line, as rbd lock ls says
locks_of() {
	rbd -c "$C" lock ls --format json "$1" | python3 -c 'import json,sys
for l in json.load(sys.stdin) or []: print(l["id"] + "\t" + l["locker"])'
}

# image_id IMAGE: its id (the header object is rbd_header.<id>)
image_id() {
	rbd -c "$C" info --format json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}

# asok_conf [LINE...]: $T/e2trim.conf, the cluster's conf with an admin
# socket for e2trim's own client ($T/e2trim.asok, to see what it waits
# for) and LINEs more in its [client] section
asok_conf() {
	{
		cat "$C"
		printf '[client]\nadmin_socket = %s\n' "$T/e2trim.asok"
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} >"$T/e2trim.conf"
	chmod 600 "$T/e2trim.conf"
}

# e2trim_waits_on OBJECT [OP]: e2trim's client (asok_conf) has a request
# on OBJECT in flight; with OP, one of that single op alone ("call
# lock.get_info": its own look for its lock)
# shellcheck disable=SC2317  # called through until_event
e2trim_waits_on() {
	ceph --admin-daemon "$T/e2trim.asok" objecter_requests 2>/dev/null | python3 -c '
import json, sys
try:
    ops = json.load(sys.stdin).get("ops", [])
except ValueError:
    sys.exit(1)
obj, op = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
sys.exit(not any(o.get("object_id") == obj and (not op or (
    len(o.get("osd_ops", [])) == 1 and o["osd_ops"][0].startswith(op))) for o in ops))' "$@"
}

# osd_epoch: the cluster's OSD map epoch now (after cluster_pause: the
# paused map's)
osd_epoch() {
	ceph -c "$C" osd dump --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["epoch"])'
}

# e2trim_term [GUARD_PID]: SIGTERM to the held e2trim (pause_e2trim's,
# or the one GUARD_PID runs), itself rather than its guard.  Through the guard the signal arrives once timeout(1)
# has passed it on, which can be after a resume_e2trim that follows at
# once: e2trim then went past its looks at the stop first.  Sent to
# e2trim, it is pending on its main thread (the kernel's choice for a
# signal to the process, which that thread does not block) when kill
# returns, and handled before the pause point's read returns.
e2trim_term() {
	local pid
	pid=$(pgrep -P "${1:-$(cat "$PAUSE.pid")}" -x e2trim) || fail "no e2trim under the guard"
	kill -TERM "$pid"
}

# e2trim_has_map EPOCH: e2trim's client (asok_conf) has OSD map EPOCH or
# a newer one: after cluster_pause, it holds its requests from then on
# shellcheck disable=SC2317  # called through until_event
e2trim_has_map() {
	ceph --admin-daemon "$T/e2trim.asok" perf dump objecter 2>/dev/null | python3 -c '
import json, sys
try:
    e = json.load(sys.stdin)["objecter"]["map_epoch"]
except (ValueError, KeyError):
    sys.exit(1)
sys.exit(e < int(sys.argv[1]))' "$1"
}

# until_event WHAT CMD...: poll CMD under a generous guard (never a
# timing: 120 s only says the event never came); the held e2trim's end
# (pause_e2trim's $PAUSE.rc) ends the wait too, what it left is judged
until_event() {
	local what=$1 end=$((SECONDS + 120))
	shift
	until "$@"; do
		[ ! -s "$PAUSE.rc" ] || return 0
		[ "$SECONDS" -lt "$end" ] || fail "$what: not seen within 120 s"
		sleep 0.1
	done
}

# blocks_changed A B: "BYTES FIRST END" of the 4 KiB blocks in which
# files A and B differ (FIRST -1 and END 0 when none do)
blocks_changed() {
	python3 - "$1" "$2" <<'PY'
import sys
a, b = (open(p, "rb") for p in sys.argv[1:3])
n = end = off = 0
first = -1
while True:
    x, y = a.read(4096), b.read(4096)
    if not x:
        break
    if x != y:
        n += 4096
        first = off if first < 0 else first
        end = off + 4096
    off += 4096
print(n, first, end)
PY
}
