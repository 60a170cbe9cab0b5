#!/bin/bash
# What another client can still do to an RBD image while e2trim holds its
# exclusive lock, between two batches of discards (the "trimming" pause
# point: some discards sent, the rest of the plan not yet), and what
# e2trim must do about it (issue 35, point 1; issue 33, points 1 and 7):
#  1. `rbd resize` goes through (the lock owner, e2trim's librbd, runs
#     the resize asked of it): e2trim's check before each request sees
#     the new size and stops, 26, "resized", nothing sent after; the
#     oracle: every byte of the image from the byte the message names to
#     the filesystem's end is the imported image's (its free blocks still
#     hold the aged 0x5a), and no lock is left;
#  2. `rbd lock add` (another client's lock) is refused by Ceph, EBUSY:
#     e2trim's lock is not handed over nor shared; e2trim ends 0 and
#     leaves no lock, the image passes e2fsck -fn;
#  3. `rbd lock add` while e2trim verifies (read-only, no lock of its
#     own yet): taken; the run is refused with 26 before any discard,
#     the image is byte-identical and the other client's lock stays;
#  4. `rbd feature disable ... exclusive-lock` goes through too (the
#     owner, e2trim's librbd, carries it out), and from then any client
#     writes without a lock: e2trim's check before each request sees the
#     features changed and stops, 26, nothing sent after (issue 46,
#     point 1); the oracle as in 1.
. "$(dirname "$0")/ceph_lib.sh"
own_images midrun
IMG=rbd/midrun
SPEC="rbd:$IMG:conf=$C"

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 7
image_sha() { rbd -c "$C" export --no-progress "$IMG" - 2>/dev/null | sha256sum | cut -d' ' -f1; }
locks() { rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys; print(" ".join(l["locker"] for l in json.load(sys.stdin)))'; }
# start AT: e2trim on a fresh import, held at pause point AT
start() {
	rbd_gone midrun
	rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
	pause_arm "$1"
	"$E2TRIM" -v "$SPEC" >"$T/out" 2>"$T/err" &
	run=$!
	unset E2TRIM_TEST_PAUSE
	pause_wait
	[ "$PAUSED" != exited ] || { cat "$T/err"; fail "$1: e2trim ended before its pause"; }
	# held once: a second hold (verifying again under the lock) exits 99
	rm -f "$T/pause"
}
finish_run() {
	pause_release 1
	wait "$run"; RC=$?
	pause_disarm
	OUT=$T/out ERR=$T/err
	cat "$T/out" "$T/err"
}

# untouched_from WHAT: the message says from which byte nothing was sent
# ($from), and every byte from there to the filesystem's end is the
# imported image's (its free blocks still hold the aged 0x5a); no lock
# is left
untouched_from() {
	from=$(sed -n 's/.*nothing was sent from byte \([0-9]*\) on.*/\1/p' "$ERR")
	[ -n "$from" ] || fail "$1: the refusal does not say where it stopped"
	end=$((128 << 20))
	[ "$from" -lt "$end" ] || fail "$1: stopped at byte $from: nothing was left to send"
	rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
	cmp -s <(tail -c +$((from + 1)) "$T/fs.img") <(head -c "$end" "$T/x.img" | tail -c +$((from + 1))) ||
		fail "$1: bytes from $from on changed after the stop"
	assert_eq "$(locks)" "" "$1: locks after the stop"
	rm -f "$T/x.img"
}

# 1. resized between two batches
start trimming
mine=$(locks)
[ -n "$mine" ] || fail "e2trim holds no lock while it trims"
rbd -c "$C" resize --no-progress --size 256M "$IMG" || fail "rbd resize while e2trim trims"
finish_run
assert_rc 26 "resized between two batches"
assert_grep "resized while e2trim" "$ERR" "the resize named"
untouched_from "resized"
note "resized between two batches: 26, bytes $from..$end as imported, no lock left"

# 2. another client's lock between two batches: refused by Ceph
start trimming
mine=$(locks)
rc=0
rbd -c "$C" lock add "$IMG" other >"$T/lock.log" 2>&1 || rc=$?
assert_eq "$rc" 16 "rbd lock add while e2trim holds the lock (EBUSY)"
assert_eq "$(locks)" "$mine" "the locks while e2trim trims"
finish_run
assert_rc 0 "another client's lock refused by Ceph"
assert_eq "$(locks)" "" "locks after the run"
rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn after the run"; }
rm -f "$T/x.img"
note "another client's lock while e2trim trims: refused by Ceph (EBUSY), e2trim 0"

# 3. another client's lock while e2trim verifies (no lock of its own yet)
start verifying
sha0=$(image_sha)
rbd -c "$C" lock add "$IMG" other || fail "rbd lock add while e2trim verifies"
other=$(locks)
finish_run
assert_rc 26 "another client's lock taken during verification"
assert_eq "$(locks)" "$other" "the other client's lock after the refusal"
assert_eq "$(image_sha)" "$sha0" "the image after the refusal"
rbd -c "$C" lock rm "$IMG" other "$other" || fail "rbd lock rm"
note "another client's lock during verification: 26, image unchanged, its lock kept"

# 4. the lock's feature switched off between two batches (through
# e2trim's own client, the lock's owner): 26, the rest untouched
start trimming
[ -n "$(locks)" ] || fail "e2trim holds no lock while it trims"
rbd -c "$C" feature disable "$IMG" object-map fast-diff exclusive-lock ||
	fail "rbd feature disable while e2trim trims"
finish_run
assert_rc 26 "exclusive-lock switched off between two batches"
assert_grep "features or header changed while e2trim held its exclusive lock" "$ERR" "the feature change named"
assert_grep "rbd feature enable" "$ERR" "the fix"
untouched_from "exclusive-lock switched off"
note "exclusive-lock switched off between two batches: 26, bytes $from..$end as imported, no lock left"
exit 0
