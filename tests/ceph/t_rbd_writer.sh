#!/bin/bash
# Another client that opens the RBD image read-write while e2trim runs
# (issue 33, point 1): at each pause point (before verification, during
# it, at the first discard, between two batches) qemu-io writes 64 KiB
# of a pattern into a chunk the filesystem calls free and the image
# holds as data, i.e. one e2trim's plan discards.  The writer must be
# kept out (its write fails: e2trim holds librbd's exclusive lock and
# does not hand it over) or the run refused with 26; whatever the writer
# wrote must read back afterwards.  (The checks run read-only, the lock
# is taken after them: a writer during verification gets in, and the
# run is refused at the lock, its header object having changed.)  Then SIGTERM at each pause point:
# e2trim exits 130 and leaves no lock and no watcher behind.
. "$(dirname "$0")/ceph_lib.sh"
own_images writer control
command -v qemu-io >/dev/null || skip "qemu-io is missing: make deps-ceph"
IMG=rbd/writer
SPEC="rbd:$IMG:conf=$C"
CHUNK=65536

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 5
# the spot: an aligned 64 KiB of the last free run, 1 MiB from its end
# (so that it is sent in a later batch than the first), filled (age)
spot=$(free_block_ranges "$T/fs.img" | tail -1 | awk -v c=$CHUNK '
	{ e = ($2 + 1) * 4096 - 1048576; s = e - c; s -= s % c;
	  if (s >= $1 * 4096) print s }')
[ -n "$spot" ] || fail "no free run large enough for the writer's spot"

# read_spot IMAGE: the spot's bytes, hashed
read_spot() {
	rbd -c "$C" export --no-progress "$1" - 2>/dev/null |
		dd bs=$CHUNK skip=$((spot / CHUNK)) count=1 status=none | sha256sum | cut -d' ' -f1
}
pattern=$(head -c $CHUNK /dev/zero | tr '\0' '\134' | sha256sum | cut -d' ' -f1)
# writer IMAGE: qemu-io opens it read-write through librbd and writes
writer() {
	timeout 120 qemu-io -f raw "rbd:$1:conf=$C" -c "write -P 0x5c $spot $CHUNK" \
		>"$T/writer.log" 2>&1
}
lock_count() { rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
watcher_count() { rbd -c "$C" status --format json "$IMG" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["watchers"]))'; }

# the writer works on an image nobody holds (and leaves no lock)
rbd -c "$C" import --no-progress "$T/fs.img" rbd/control || fail "rbd import"
writer rbd/control || { cat "$T/writer.log"; fail "qemu-io cannot write an RBD image"; }
assert_eq "$(read_spot rbd/control)" "$pattern" "the control write"
rbd -c "$C" rm --no-progress rbd/control >/dev/null 2>&1

for at in verifying@start verifying trimming@start trimming; do
	rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
	pause_arm "$at"
	"$E2TRIM" --json "$SPEC" >"$T/j" 2>"$T/err" &
	run=$!
	unset E2TRIM_TEST_PAUSE
	pause_wait
	[ "$PAUSED" != exited ] || { cat "$T/err"; fail "$at: e2trim ended before its pause"; }
	# held once: the checks run again under the lock (verifying again),
	# where a second hold would wait forever; without the FIFO's name
	# e2trim exits 99 there instead (a failure that says so, not a hang)
	rm -f "$T/pause"
	wrc=0
	writer "$IMG" || wrc=$?
	pause_release 1
	wait "$run"; RC=$?
	pause_disarm
	ERR=$T/err
	got=$(read_spot "$IMG")
	if [ "$wrc" = 0 ]; then
		# it wrote: the run must have been refused, and the bytes kept
		assert_eq "$got" "$pattern" "$at: the writer's bytes after e2trim (exit $RC)"
		assert_rc 26 "$at: a writer that got in"
		how="wrote, run refused (26)"
	else
		grep -q "Read-only file system" "$T/writer.log" ||
			{ cat "$T/writer.log"; fail "$at: the writer failed otherwise than kept out"; }
		[ "$RC" = 0 ] || [ "$RC" = 26 ] || assert_rc 0 "$at: e2trim with a writer kept out"
		how="kept out (EROFS), e2trim exit $RC"
	fi
	python3 - "$T/j" <<'PY' || fail "$at: the JSON status"
import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]
assert t["status"] == ("refused" if t["exit_code"] == 26 else "trimmed"), t["status"]
PY
	assert_eq "$(lock_count)" 0 "$at: locks left"
	rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
	e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$at: e2fsck -fn"; }
	rm -f "$T/x.img"
	note "a writer at $at: $how"
	rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1
done

# SIGTERM at each pause point (to e2trim itself: e2trim_term), nothing
# held after
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
for at in verifying@start verifying trimming@start trimming; do
	pause_arm "$at"
	"$E2TRIM" "$SPEC" >"$T/out" 2>"$T/err" &
	run=$!
	unset E2TRIM_TEST_PAUSE
	pause_wait
	[ "$PAUSED" != exited ] || { cat "$T/err"; fail "$at: e2trim ended before its pause"; }
	# the checks run on a read-only open (nothing held, nothing written),
	# the trim under the lock
	case $at in
	verifying*) held=0 ;;
	*) held=1 ;;
	esac
	assert_eq "$(lock_count)" "$held" "$at: e2trim's lock while it runs"
	e2trim_term "$run"
	pause_release 1
	wait "$run"; RC=$?
	pause_disarm
	ERR=$T/err
	assert_rc 130 "SIGTERM at $at"
	assert_eq "$(lock_count)" 0 "$at: locks after SIGTERM"
	assert_eq "$(watcher_count)" 0 "$at: watchers after SIGTERM"
	note "SIGTERM at $at: exit 130, no lock, no watcher"
done
rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1
exit 0
