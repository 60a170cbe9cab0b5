#!/bin/bash
# NBD servers that run already, named by URI: nbdkit's file plugin over a
# raw image trims it (holes punched, used blocks identical); a read-only
# qemu-nbd cannot trim and is refused with 25; a qcow2 that another
# qemu-nbd holds (qemu's image lock) is refused with 26, with qemu's own
# words.  Each refusal changes nothing.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"
command -v nbdkit >/dev/null || skip "nbdkit not installed (make deps installs it)"

# No server is waited for by the clock.  kit NAME ARGS...: nbdkit in the
# foreground whose pid file is a FIFO: it writes its pid there once it
# accepts connections, and the test reads it; $KIT is its pid.
kit() {
	local name=$1 pid=; shift
	mkfifo "$T/$name.pid" || fail "mkfifo"
	exec 5<>"$T/$name.pid"
	nbdkit -f -U "$T/$name.sock" -P "$T/$name.pid" "$@" &
	PIDS+=("$!")
	read -r -t 300 -u 5 pid || true
	exec 5>&-
	[ "$pid" = "${PIDS[-1]}" ] || fail "nbdkit $name did not start"
	KIT=$pid
}
# qnbd NAME ARGS...: qemu-nbd --fork, which returns once it serves.
qnbd() {
	local name=$1; shift
	qemu-nbd --fork --pid-file="$T/$name.pid" --persistent -k "$T/$name.sock" "$@" ||
		fail "qemu-nbd $name"
	PIDS+=("$(cat "$T/$name.pid")")
}
# stop PID: end a server and wait until it is gone (its locks too)
stop() {
	kill "$1" 2>/dev/null || return 0
	python3 -c 'import os, select, sys
try:
    fd = os.pidfd_open(int(sys.argv[1]))
except ProcessLookupError:
    sys.exit(0)
select.select([fd], [], [], 300)' "$1"
}

raw="$T/fs.raw"
mkfs "$raw" 128M -t ext4
age "$raw" 3
e2fsck -fn "$raw" >/dev/null 2>&1 || fail "e2fsck before"
used0=$(used_blocks_digest "$raw")
hbs=$(stat -f -c %S "$raw")
oracle_extents "$raw" | aligned_extents "$hbs" >"$T/plan"
want=$(awk '{s += $2} END {print s + 0}' "$T/plan")

# nbdkit's file plugin: trims punch holes in the raw file
kit kit file "$raw"
uri="nbd+unix:///?socket=$T/kit.sock"
alloc0=$(alloc_bytes "$raw")
run_e2trim -v "$uri"
assert_rc 0 "trim through nbdkit"
stop "$KIT"
alloc1=$(alloc_bytes "$raw")
# exact, not a share: the free space was all written (age), so every
# planned extent was allocated and must now be a hole, and the file must
# have shrunk by their sum, which is what e2trim says it trimmed
python3 "$(dirname "$0")/../holes.py" "$raw" "$T/plan" "$hbs" >/dev/null ||
	fail "a planned extent is not a hole after the trim through nbdkit"
assert_eq "$((alloc0 - alloc1))" "$want" "bytes the raw file shrank by"
assert_grep "($want bytes) trimmed" "$OUT" "e2trim's count through nbdkit"
assert_eq "$(used_blocks_digest "$raw")" "$used0" "used blocks after the trim"
e2fsck -fn "$raw" >/dev/null 2>&1 || fail "e2fsck after"
note "nbdkit file plugin: $alloc0 -> $alloc1 bytes allocated"

# a server that takes nothing smaller than 4 KiB and prefers 64 KiB
# (blocksize-policy refuses anything else): the superblock is read as
# whole blocks, and the trims go in whole 64 KiB units
mkfs "$T/bs.raw" 64M -t ext4
age "$T/bs.raw" 9
used_bs=$(used_blocks_digest "$T/bs.raw")
kit bs --filter=blocksize-policy file "$T/bs.raw" \
	blocksize-minimum=4096 blocksize-preferred=65536 blocksize-maximum=1M \
	blocksize-error-policy=error
run_e2trim -n --list "nbd+unix:///?socket=$T/bs.sock"
assert_rc 0 "dry run through a 4 KiB-minimum server"
oracle_extents "$T/bs.raw" | aligned_extents 65536 >"$T/bs.plan"
cmp -s "$OUT" "$T/bs.plan" || { diff "$OUT" "$T/bs.plan" | head; fail "--list not in the server's preferred 64 KiB"; }
run_e2trim -v "nbd+unix:///?socket=$T/bs.sock"
assert_rc 0 "trim through a 4 KiB-minimum server"
stop "$KIT"
assert_eq "$(used_blocks_digest "$T/bs.raw")" "$used_bs" "used blocks (blocksize-policy)"
e2fsck -fn "$T/bs.raw" >/dev/null 2>&1 || fail "e2fsck after (blocksize-policy)"

# a read-only server: refused with 25, nothing changed
mkfs "$T/fs2.raw" 64M -t ext4
age "$T/fs2.raw" 5
qemu-img convert -O qcow2 "$T/fs2.raw" "$T/q2.qcow2" || fail "convert"
sum=$(sha_of "$T/q2.qcow2")
qnbd ro -f qcow2 --read-only "$T/q2.qcow2"
run_e2trim -v "nbd+unix:///?socket=$T/ro.sock"
assert_rc 25 "read-only NBD server"
assert_grep "the NBD server cannot trim; start it with discard enabled" "$ERR" "25's message"
# the dry run asks what the real run asks, and is refused the same way
# (issue 34: it used to count bytes the real run would refuse)
run_e2trim -n -v "nbd+unix:///?socket=$T/ro.sock"
assert_rc 25 "dry run through a read-only server"
assert_grep "the NBD server cannot trim; start it with discard enabled" "$ERR" "the dry run's 25"
stop "${PIDS[-1]}"
assert_eq "$(sha_of "$T/q2.qcow2")" "$sum" "refused image changed"

# another qemu-nbd holds the image: refused with 26, nothing changed
qnbd hold -f qcow2 "$T/q2.qcow2"
run_e2trim -v "$T/q2.qcow2"
assert_rc 26 "image locked by another qemu-nbd"
assert_grep 'open in another program (qemu.s image lock, or an RBD image.s watchers and locks)' "$ERR" "26's message"
assert_grep 'Failed to get .*lock' "$ERR" "qemu's own words"
run_e2trim -n "$T/q2.qcow2"
assert_rc 26 "dry run of a locked image"
stop "${PIDS[-1]}"
assert_eq "$(sha_of "$T/q2.qcow2")" "$sum" "locked image changed"

# the lock gone, the same image trims
run_e2trim "$T/q2.qcow2"
assert_rc 0 "trim once the lock is gone"

# no server there at all
run_e2trim "nbd+unix:///?socket=$T/none.sock"
assert_rc 1 "no server"
assert_grep "cannot connect to the NBD server" "$ERR" "no server's message"
note "25, 26 and a missing server refused; nothing changed"
exit 0
