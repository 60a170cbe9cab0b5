#!/bin/bash
# A raw image held by qemu (qemu-nbd -f raw, read-write, as a running VM
# would hold it) is refused with 26, the message naming the holder, and
# the image is unchanged; qemu-storage-daemon the same, and a block
# device (a loop device) that qemu-nbd holds.  While e2trim
# trims a raw image it holds qemu's image locks: a qemu-nbd or qemu-io
# that wants to write the image fails with qemu's lock error.  No root.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

img="$T/fs.raw"
mkfs "$img" 128M -t ext4
age "$img" 6
used0=$(used_blocks_digest "$img")
sum=$(sha256sum <"$img")

# qemu-nbd has it open read-write: 26, naming qemu-nbd and its pid.
# --fork returns once the server holds the image and listens: no polling.
qemu-nbd --fork -f raw --persistent --pid-file="$T/nbd.pid" -k "$T/nbd.sock" "$img" ||
	fail "qemu-nbd on $img"
pid=$(cat "$T/nbd.pid")
PIDS+=("$pid")
run_e2trim -v "$img"
assert_rc 26 "a raw image that qemu-nbd holds"
assert_grep "open in another program (qemu.s image lock, or an RBD image.s watchers and locks) (held by qemu-nbd, pid $pid)" "$ERR" "26 names the holder"
run_e2trim -n "$img"
assert_rc 26 "dry run of a raw image that qemu-nbd holds"
run_e2trim --zero-fill "$img"
assert_rc 26 "--zero-fill of a raw image that qemu-nbd holds"
kill "$pid"; wait_exit "$pid" qemu-nbd
assert_eq "$(sha256sum <"$img")" "$sum" "the held image after the refusals"
note "qemu-nbd $pid holding it: 26"

# qemu-storage-daemon, where installed
if command -v qemu-storage-daemon >/dev/null; then
	# --daemonize: the parent exits once the export is up
	qemu-storage-daemon --blockdev driver=file,node-name=f,filename="$img" \
		--nbd-server addr.type=unix,addr.path="$T/qsd.sock" \
		--export type=nbd,id=e,node-name=f,writable=on \
		--pidfile "$T/qsd.pid" --daemonize || fail "qemu-storage-daemon on $img"
	PIDS+=("$(cat "$T/qsd.pid")")
	run_e2trim "$img"
	assert_rc 26 "a raw image that qemu-storage-daemon holds"
	assert_grep "held by qemu-storage-d" "$ERR" "26 names qemu-storage-daemon"
	kill "${PIDS[-1]}"; wait_exit "${PIDS[-1]}" qemu-storage-daemon
	assert_eq "$(sha256sum <"$img")" "$sum" "the image after qemu-storage-daemon"
	note "qemu-storage-daemon holding it: 26"
fi

# a block device that a VM uses as its disk: the same locks, on the
# device node (O_EXCL does not see qemu)
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	loop=$(loop_attach "$img")
	qemu-nbd --fork --pid-file="$T/dev.pid" -f raw -k "$T/dev.sock" "$loop" ||
		fail "qemu-nbd on $loop"
	pid=$(cat "$T/dev.pid")
	run_e2trim -v "$loop"
	kill "$pid"
	assert_rc 26 "a block device that qemu-nbd holds"
	assert_grep "held by qemu-nbd, pid $pid" "$ERR" "26 names the holder (device)"
	losetup -d "$loop"
	assert_eq "$(sha256sum <"$img")" "$sum" "the image behind the held device"
	note "a block device qemu-nbd holds: 26"
fi

# while e2trim runs (paused before its first discard), qemu cannot open
# the image for writing (qemu-nbd, qemu-io)
pause_e2trim -v "$img"
rc=0
# --fork: returns once the image is open (0) or could not be (1)
qemu-nbd --fork --pid-file="$T/late.pid" -f raw -k "$T/late.sock" "$img" \
	2>"$T/late.err" || rc=$?
if [ "$rc" = 0 ]; then
	kill "$(cat "$T/late.pid")"
	fail "qemu-nbd opened the image e2trim is trimming"
fi
assert_grep 'Failed to get "write" lock' "$T/late.err" "qemu-nbd's lock error"
rc=0
qemu-io -f raw -c "write -P 0x77 0 4096" "$img" >/dev/null 2>"$T/io.err" || rc=$?
[ "$rc" != 0 ] || fail "qemu-io wrote into the image e2trim is trimming"
assert_grep 'Failed to get "write" lock' "$T/io.err" "qemu-io's lock error"
# a reader that lets others write (qemu-io -r) is let through
qemu-io -f raw -r -c "read 0 4096" "$img" >/dev/null 2>&1 || fail "qemu-io -r refused"
resume_e2trim
assert_rc 0 "the trim that held the locks"
assert_eq "$(used_blocks_digest "$img")" "$used0" "used blocks after the trim"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after"
# the locks went with e2trim
qemu-io -f raw -c "read 0 4096" "$img" >/dev/null 2>&1 || fail "qemu-io (read-write) after e2trim exited"
note "e2trim's own locks kept qemu-nbd and qemu-io out during the trim"
exit 0
