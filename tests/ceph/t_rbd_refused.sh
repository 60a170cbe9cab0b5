#!/bin/bash
# An RBD image in use is refused and left as it was: a watcher (another
# qemu-nbd has it open, as a VM would), a lock another client holds, and
# a watcher that comes while e2trim verifies (the check before the first
# discard; e2trim holds the exclusive lock, so it cannot write).  A snapshot: -n reads it, a trim is refused (3).
# Another client's lock taken while e2trim watches the image and verifies
# under its own (e2trim's removed without blocklisting it): named, 26.
. "$(dirname "$0")/ceph_lib.sh"
own_images busy
IMG=rbd/busy
SPEC="rbd:$IMG:conf=$C"
OUT=$T/out ERR=$T/err

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 3
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
image_sha() { rbd -c "$C" export --no-progress "$1" - 2>/dev/null | sha256sum | cut -d' ' -f1; }
watchers() { rbd -c "$C" status --format json "$IMG" |
	python3 -c 'import json,sys; print(" ".join(w["address"] for w in json.load(sys.stdin)["watchers"]))'; }
sha0=$(image_sha "$IMG")
du0=$(du_exact "$IMG")

# start_holder: qemu-nbd holding the image open; --fork returns once it
# serves (the image is open, its watch registered): no sleep needed
start_holder() {
	rm -f "$T/holder.pid"
	qemu-nbd --fork --pid-file "$T/holder.pid" -f raw -k "$T/holder.sock" \
		"rbd:$IMG:conf=$C" || fail "qemu-nbd holder"
	HOLDER=$(cat "$T/holder.pid")
	PIDS+=("$HOLDER")
}
# stop_holder: SIGTERM, and once the holder has exited (wait_exit: the
# event, no time limit but a guard) its watch must be gone: qemu-nbd
# closes the image, which unwatches it, before it exits
stop_holder() {
	kill "$HOLDER"
	wait_exit "$HOLDER" "the qemu-nbd holder"
	[ -z "$(watchers)" ] || fail "the holder's watch outlived it"
}
unchanged() {
	assert_eq "$(image_sha "$IMG")" "$sha0" "the image's bytes after $1"
	assert_eq "$(du_exact "$IMG")" "$du0" "rbd du --exact after $1"
}

# 1. a watcher: refused before qemu-nbd starts, naming its address
start_holder
who=$(watchers)
[ -n "$who" ] || fail "qemu-nbd is not a watcher"
"$E2TRIM" "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
cat "$ERR"
assert_rc 26 "a watched RBD image"
assert_grep "watched by $who" "$ERR" "the watcher's address"
# a dry run too: a running VM has the filesystem mounted, its bitmaps in flux
"$E2TRIM" -n "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
assert_rc 26 "a dry run on a watched RBD image"
stop_holder
unchanged "a watcher's refusal"
note "a watcher ($who) refused, image unchanged"

# 2. a lock another client holds (rbd lock add), nobody watching
rbd -c "$C" lock add "$IMG" e2trim-test || fail "rbd lock add"
locker=$(rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
"$E2TRIM" "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
cat "$ERR"
assert_rc 26 "a locked RBD image"
assert_grep "locked by $locker" "$ERR" "the locker's address"
# the lock is still there: e2trim never breaks one
assert_eq "$(rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 1 "locks after the refusal"
rbd -c "$C" lock rm "$IMG" e2trim-test "$(rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["locker"])')" ||
	fail "rbd lock rm"
unchanged "a locker's refusal"
note "a lock ($locker) refused and left in place, image unchanged"

# 3. a watcher that comes while e2trim verifies: the check before the
# first discard refuses, JSON status "refused" (held at its first
# verifying report: no timing)
pause_arm verifying
"$E2TRIM" --json "$SPEC" >"$OUT" 2>"$ERR" &
run=$!
unset E2TRIM_TEST_PAUSE
pause_wait
[ "$PAUSED" != exited ] || fail "e2trim ended before verifying"
# held once: a run that got past the check would verify again under the
# lock and wait there forever; with the FIFO's name gone it exits 99
rm -f "$T/pause"
start_holder
pause_release 1
wait "$run"; RC=$?
pause_disarm
cat "$ERR"
assert_rc 26 "a watcher that came during verification"
assert_grep "another client opened the RBD image" "$ERR" "the late watcher"
# a refusal at the check before the first discard is one as at open
python3 - "$OUT" <<'PY' || fail "the late watcher's JSON status"
import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]
assert t["status"] == "refused", t["status"]
PY
stop_holder
unchanged "a late watcher's refusal"
note "a watcher that came during verification refused, image unchanged"

# 5. another client's lock taken while e2trim's connection watches the
# image and holds its own (issue 45, point 1): held at the verification
# under the lock, e2trim's lock is removed without blocklisting it (so
# its librbd goes on believing it owns it) and another client takes one;
# the check right before the first discard names that lock: 26, nothing
# trimmed, the other client's lock kept
lock_field() { rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys
l = json.load(sys.stdin); print(l[0][sys.argv[1]] if l else "")' "$1"; }
pause_arm verifying
"$E2TRIM" --json "$SPEC" >"$OUT" 2>"$ERR" &
run=$!
unset E2TRIM_TEST_PAUSE
pause_wait
[ "$PAUSED" != exited ] || fail "e2trim ended before verifying"
# the read-only verification goes on; the one under the lock holds again
pause_release 1
pause_wait
[ "$PAUSED" != exited ] || { cat "$ERR"; fail "e2trim ended before it verified under its lock"; }
id=$(lock_field id) owner=$(lock_field locker)
[ -n "$id" ] || fail "e2trim holds no lock while it verifies under it"
[ -n "$(watchers)" ] || fail "e2trim does not watch the image"
rbd -c "$C" --rbd_blocklist_on_break_lock false lock rm "$IMG" "$id" "$owner" ||
	fail "rbd lock rm of e2trim's lock"
rbd -c "$C" lock add "$IMG" other || fail "rbd lock add while e2trim watches"
other=$(lock_field address)
pause_release 1
wait "$run"; RC=$?
pause_disarm
cat "$ERR"
assert_rc 26 "another client's lock taken while e2trim watched the image"
assert_grep "another client opened the RBD image while e2trim checked it" "$ERR" "the other client"
assert_grep "lockers: $other" "$ERR" "the other client's lock named"
assert_eq "$(lock_field address)" "$other" "the other client's lock after the refusal"
rbd -c "$C" lock rm "$IMG" other "$(lock_field locker)" || fail "rbd lock rm other"
unchanged "a lock taken while e2trim watched"
note "another client's lock taken while e2trim watched the image: 26, named, image unchanged"

# 4. a snapshot: -n reads it (a VM on the image does not matter), a
# trim is refused with 3
rbd -c "$C" snap create --no-progress "$IMG@s1" || fail "rbd snap create"
# with a snapshot, the image's own count is what changed since it: 0
du0=$(du_exact "$IMG")
start_holder
"$E2TRIM" -n --json "rbd:$IMG@s1:conf=$C" >"$T/j" 2>"$ERR"; RC=$?
assert_rc 0 "-n on a snapshot"
python3 - "$T/j" "$(du_exact "$IMG@s1")" <<'PY' || fail "the snapshot's JSON"
import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]
r = t["result"]
assert r["allocated_before"] == int(sys.argv[2]), (r, sys.argv[2])
assert r["bytes_trimmed"] > 0, r
PY
stop_holder
"$E2TRIM" "rbd:$IMG@s1:conf=$C" >"$OUT" 2>"$ERR"; RC=$?
cat "$ERR"
assert_rc 3 "a trim of a snapshot"
assert_grep "snapshot is read-only" "$ERR" "the snapshot's refusal"
unchanged "the snapshot runs"
note "a snapshot: -n reads it, a trim is refused (3)"
rbd -c "$C" snap purge --no-progress "$IMG" >/dev/null 2>&1
rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1
exit 0
