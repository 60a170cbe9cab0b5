#!/bin/bash
# A dry run asks every question the real run asks before its first
# discard, and refuses the same way (issue 34 point 4).  Three targets
# that cannot be trimmed, where -n used to report bytes and exit 0 while
# the real run refused:
#  - an NBD server that cannot trim (nbdkit -r): 25;
#  - a read-only loop device (losetup -r, BLKROGET says 1): 1;
#  - an image file on ramfs (no fallocate, so no hole can be punched): 2.
# For each, -n and the real run exit with the same code, and neither
# changes anything: the image's bytes (sha256), its allocated blocks and
# its mtime.  The free space holds data (a deleted file), so the real run
# has requests to send.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
command -v nbdkit >/dev/null || skip "nbdkit not installed (make deps installs it)"

orig=$T/orig.img
mkfs "$orig" 64M -t ext4 -b 4096
head -c $((6 << 20)) /dev/urandom >"$T/big"
debugfs -w -R "write $T/big big" "$orig" >/dev/null 2>&1 || fail "debugfs write"
debugfs -w -R "rm big" "$orig" >/dev/null 2>&1 || fail "debugfs rm"
rm -f "$T/big"

# state FILE: what a run must not change
# written back first: an extent block allocated at writeback counts in
# st_blocks, and must not look like the run's doing
state() { sync "$1"; echo "$(sha_of "$1") $(stat -c '%b %s %Y.%y' "$1")"; }

# same_both WHAT CODE ARGS...: -n ARGS and ARGS exit CODE, $IMG unchanged
same_both() {
	local what=$1 code=$2 before
	shift 2
	before=$(state "$IMG")
	run_e2trim -n "$@"
	assert_rc "$code" "$what, -n"
	cp "$ERR" "$T/err.n"
	assert_eq "$(state "$IMG")" "$before" "$what, -n: the image"
	run_e2trim "$@"
	assert_rc "$code" "$what, the real run"
	assert_eq "$(state "$IMG")" "$before" "$what, the real run: the image"
	# the same refusal, word for word
	assert_eq "$(cat "$T/err.n")" "$(cat "$ERR")" "$what: -n's message vs the real run's"
	note "$what: -n and the real run both exit $code: $(head -1 "$ERR")"
}

# nbdkit -r: a server that says it cannot trim
IMG=$T/kit.img
cp --sparse=always "$orig" "$IMG"
mkfifo "$T/kit.pid" || fail "mkfifo"
exec 5<>"$T/kit.pid"
nbdkit -r -f -U "$T/kit.sock" -P "$T/kit.pid" file "$IMG" &
PIDS+=("$!")
read -r -t 300 -u 5 pid || true
exec 5>&-
[ "$pid" = "${PIDS[-1]}" ] || fail "nbdkit -r did not start"
same_both "nbdkit -r" 25 "nbd+unix:///?socket=$T/kit.sock"
kill "$pid"

# losetup -r: a block device that takes no write
IMG=$T/ro.img
cp --sparse=always "$orig" "$IMG"
dev=$(loop_attach "$IMG" -r)
assert_eq "$(blockdev --getro "$dev")" 1 "losetup -r: BLKROGET"
same_both "losetup -r" 1 "$dev"
# --zero-fill writes too
before=$(state "$IMG")
run_e2trim -n --zero-fill "$dev"
assert_rc 1 "losetup -r, -n --zero-fill"
assert_eq "$(state "$IMG")" "$before" "losetup -r, -n --zero-fill: the image"
losetup -d "$dev"

# ramfs: no fallocate(), no punched hole; --zero-fill works there
mkdir -p "$T/ram"
mount -t ramfs ramfs "$T/ram" || fail "mount ramfs"
MOUNTS+=("$T/ram")
IMG=$T/ram/img
cp --sparse=always "$orig" "$IMG"
same_both "ramfs" 2 "$IMG"
same_both "ramfs, --zeroout" 2 --zeroout "$IMG"
run_e2trim -n --zero-fill "$IMG"
assert_rc 0 "ramfs, -n --zero-fill"
exit 0
