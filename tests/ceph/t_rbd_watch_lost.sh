#!/bin/bash
# The cluster stalls past the watch timeout while e2trim holds the lock
# in the middle of a trim (issue 46, point 3): e2trim is held between
# two requests (its first report with bytes trimmed), `ceph osd pause`
# stops every client's requests, and the OSD drops e2trim's watch on the
# header (the test's OSD has a watch timeout of 5 s for this test, and
# e2trim's own conf pings it every second, so that it is never dropped
# before the pause).  Once the watch is gone (the OSD's dump_watchers
# says so: an event, not a time) e2trim goes on, the cluster still
# paused: librbd cannot confirm its lock (the name's op timeout is 5 s),
# so e2trim stops, "lost the exclusive lock", exit 1; librbd's release
# times out and forgets the lock, which stays listed.  Once e2trim asks
# the cluster for its own lock (its client's objecter_requests shows the
# question: an event again) the cluster answers again, and e2trim must
# remove its own lock itself.  Then:
#  - no lock is left, and the next run trims (0), where the code before
#    left its lock and the next run was refused 26;
#  - the message's counts are the real ones: the blocks that differ from
#    the imported image (free blocks hold 0x5a, a discard reads as zeros)
#    are exactly the bytes it says were trimmed, more than none, and all
#    lie before the byte it says nothing was sent from.
. "$(dirname "$0")/ceph_lib.sh"
own_images stall
: "${CEPH_DIR:?run through tests/ceph/run.sh}"
IMG=rbd/stall
osd=$(awk '/^osd\./ {print $1; exit}' "$CEPH_DIR/pids")
OSD_ASOK=$CEPH_DIR/run/$osd.asok
[ -S "$OSD_ASOK" ] || fail "no admin socket for $osd: $OSD_ASOK"
wt() { ceph --admin-daemon "$OSD_ASOK" config get osd_client_watch_timeout |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["osd_client_watch_timeout"])'; }
WT0=$(wt)
# the cluster answers, with its own watch timeout, for the next test
# shellcheck disable=SC2317  # called by the trap
on_exit() {
	local rc=$?
	cluster_unpause
	ceph --admin-daemon "$OSD_ASOK" config set osd_client_watch_timeout "$WT0" >/dev/null 2>&1
	ceph_exit "$rc"
}
trap on_exit EXIT

# e2trim's own conf: the cluster's, its watch pinged every second, and
# an admin socket of its own to see what its client waits for
asok_conf "objecter_tick_interval = 1"
SPEC="rbd:$IMG:conf=$T/e2trim.conf:rados_osd_op_timeout=5"

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 5
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
id=$(image_id "$IMG")
locks() { locks_of "$IMG"; }
# watched: is the header watched, as the OSD itself says (no client op,
# which the pause would hold)
watched() { ceph --admin-daemon "$OSD_ASOK" dump_watchers | grep -q "rbd_header\.$id"; }
# asking_own: e2trim's client waits for the header's lockers alone (its
# own look for its lock, after librbd's release: librbd asks for them
# only with other calls, or to take the lock)
# shellcheck disable=SC2317  # called through until_event
asking_own() { e2trim_waits_on "rbd_header.$id" "call lock.get_info"; }
# shellcheck disable=SC2317  # called through until_event
unwatched() { ! watched; }

ceph --admin-daemon "$OSD_ASOK" config set osd_client_watch_timeout 5 >/dev/null ||
	fail "the OSD's watch timeout"
E2TRIM_TEST_PAUSE_AT=mid pause_e2trim -v "$SPEC"
[ -n "$(locks)" ] || fail "e2trim holds no lock while it trims"
watched || fail "e2trim's watch on the header is not listed"
cluster_pause
until_event "the OSD dropping e2trim's watch" unwatched
pause_release 1
until_event "e2trim looking for its own lock" asking_own
cluster_unpause
resume_e2trim
cat "$OUT" "$ERR"
assert_rc 1 "a lock lost to a stalled cluster"
assert_grep "lost the RBD image's exclusive lock" "$ERR" "the lost lock named"
assert_eq "$(locks)" "" "locks once the cluster answered"

# the counts: what the message says against what changed in the image
read -r bytes reqs from < <(sed -n 's/.*nothing was sent from byte \([0-9]*\) on after .* (\([0-9]*\) bytes) trimmed in \([0-9]*\) request.*/\2 \3 \1/p' "$ERR")
[ -n "${from:-}" ] || fail "the message gives no byte nor counts"
{ [ "$bytes" -gt 0 ] && [ "$reqs" -gt 0 ]; } || fail "the message says $bytes bytes in $reqs requests: requests had gone out"
rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
read -r changed _ last < <(blocks_changed "$T/fs.img" "$T/x.img")
assert_eq "$changed" "$bytes" "bytes that changed in the image against the bytes reported trimmed"
[ "$last" -le "$from" ] || fail "a byte changed at $last, after byte $from, from which nothing was sent"
rm -f "$T/x.img"
note "stalled past the watch timeout mid-run: 1, '$bytes bytes in $reqs requests' as changed in the image, nothing after byte $from, no lock left"

# the next run is not refused: nothing of e2trim's was left behind
RC=0
# shellcheck disable=SC2034  # RC: read by assert_rc
"$E2TRIM" "rbd:$IMG:conf=$C" >"$T/out2" 2>"$T/err2" || RC=$?
ERR=$T/err2
assert_rc 0 "the next run"
assert_eq "$(locks)" "" "locks after the next run"
note "the next run: 0, no lock left"
exit 0
