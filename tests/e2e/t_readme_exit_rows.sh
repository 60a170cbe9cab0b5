#!/bin/bash
# README's exit-code table says what e2trim does (issue 42, point 6):
# every row of the table gets a case here that runs it, and the run must
# exit with the row's code; a row with no case fails the test (a new
# row needs one).  Where a row names several cases, the one the issue
# found wrong or new is among them: a filesystem larger than its
# partition and unclean is 17 (bounds before state; today's main: 13),
# a journal device says whose journal it is (main: "use fstrim"), an
# external journal that is only missing says so (main: "needs
# recovery"), MMP in an image file is trimmed and in a partition of an
# image refused (12), a mount of the image is 10.  A loop device over
# the image that nothing uses is no refusal: e2trim holds it for the run
# (issue 41), and a process holding the image open for writing is 10.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"
need_root
mmp_no_wait
README=$(cd "$(dirname "$0")/../.." && pwd)/README.md

fixture() {	# NAME IMG: images/NAME.img.xz into IMG, sparse
	xz -dc "$IMAGES/$1.img.xz" | dd of="$2" bs=1M iflag=fullblock conv=sparse status=none ||
		fail "xz -dc $1"
}
in_part1() {	# IMG DISK: IMG as partition 1 (at 1 MiB) of a GPT disk
	local mib=$(( ($(stat -c %s "$1") >> 20) + 2 ))
	truncate -s "${mib}M" "$2"
	printf 'label: gpt\nstart=2048, size=%d, type=L\n' $(( $(stat -c %s "$1") >> 9 )) |
		sfdisk -q "$2" >/dev/null 2>&1 || fail "sfdisk $2"
	dd if="$1" of="$2" bs=1M seek=1 conv=notrunc,sparse status=none || fail dd
}
fixture ext4 "$T/clean.img"
DONE=()
row() {	# CODE WHAT: the last run_e2trim must have exited CODE
	assert_rc "$1" "row $1: $2"
	DONE+=("$1")
	note "row $1: $2"
}

run_e2trim -n "$T/clean.img"
row 0 "a clean filesystem, dry run"
l=$(loop_attach "$T/clean.img" -r)
run_e2trim -n "$l"
row 1 "a read-only device (losetup -r)"
losetup -d "$l"
run_e2trim --secure "$T/clean.img"
row 2 "--secure on an image file"
run_e2trim --no-such-option "$T/clean.img"
row 3 "usage error"
[[ $(head -1 "$ERR") == "e2trim: "* ]] || { cat "$ERR"; fail "getopt's message does not start with 'e2trim: '"; }

# 10: a mount uses the image
cp --sparse=always "$T/clean.img" "$T/mounted.img"
mkdir -p "$T/mnt"
l=$(loop_attach "$T/mounted.img")
mount "$l" "$T/mnt" || fail "mount"
MOUNTS+=("$T/mnt")
run_e2trim -n "$T/mounted.img"
row 10 "a mount (through a loop device) uses the image"
unmount_loop "$T/mnt" "$l"
l=$(loop_attach "$T/mounted.img")
run_e2trim -n "$T/mounted.img"
[ "$RC" = 0 ] || { cat "$ERR"; fail "row 10, an unused loop device over the image: exit $RC, expected 0 (held, not refused)"; }
losetup -d "$l"
# a process holding the image open for writing
exec 7<>"$T/mounted.img"
run_e2trim -n "$T/mounted.img"
exec 7>&-
row 10 "a process holds the image open for writing"

fixture notext-zeros "$T/zeros.img"
run_e2trim -n "$T/zeros.img"
row 11 "not ext"
fixture unsafe-feature-incompat "$T/incompat.img"
run_e2trim -n "$T/incompat.img"
row 12 "a feature e2trim does not know"
fixture unsafe-journal-dev "$T/jdev.img"
run_e2trim -n "$T/jdev.img"
row 12 "a journal device"
assert_grep "external journal device" "$ERR" "row 12, journal device: what it is"
! grep -q "use fstrim" "$ERR" || { cat "$ERR"; fail "row 12, journal device: told to use fstrim on it"; }
fixture ext4-mmp "$T/mmp.img"
run_e2trim -n "$T/mmp.img"
assert_rc 0 "MMP in an image file of the filesystem itself"
in_part1 "$T/mmp.img" "$T/mmp-disk.img"
run_e2trim -n -p 1 "$T/mmp-disk.img"
row 12 "MMP in a partition of an image"

fixture unsafe-not-valid "$T/unclean.img"
run_e2trim -n "$T/unclean.img"
row 13 "not cleanly unmounted"
fixture unsafe-journal-recover "$T/recover.img"
run_e2trim -n "$T/recover.img"
row 14 "a journal that needs recovery"
# an external journal that is only missing: said so
export BLKID_FILE=$T/blkid.tab
truncate -s 8M "$T/j.img"
mke2fs -q -F -O journal_dev -b 4096 "$T/j.img" || fail "mke2fs journal_dev"
l=$(loop_attach "$T/j.img")
truncate -s 32M "$T/extj.img"
mke2fs -q -F -t ext4 -J device="$l" "$T/extj.img" >/dev/null 2>&1 || fail "mke2fs -J device"
losetup -d "$l"
run_e2trim -n "$T/extj.img"
row 14 "an external journal that cannot be found"
assert_grep "cannot be found" "$ERR" "row 14, missing external journal"
! grep -q "needs recovery" "$ERR" || { cat "$ERR"; fail "row 14: a missing journal said to need recovery"; }
unset BLKID_FILE
fixture unsafe-orphan-inode "$T/orphan.img"
run_e2trim -n "$T/orphan.img"
row 15 "orphan inodes"
fixture unsafe-gd-csum "$T/gdcsum.img"
run_e2trim -n "$T/gdcsum.img"
row 16 "a damaged group descriptor"
fixture unsafe-truncated "$T/trunc.img"
run_e2trim -n "$T/trunc.img"
row 17 "an image shorter than its filesystem"
# larger than its partition and unclean: 17 before 13
truncate -s 24M "$T/big.img"
mke2fs -q -F -t ext4 "$T/big.img" >/dev/null 2>&1 || fail mke2fs
debugfs -w -R "ssv state 0" "$T/big.img" >/dev/null 2>&1 || fail debugfs
truncate -s 40M "$T/big-disk.img"
printf 'label: gpt\nstart=2048, size=32768, type=L\nstart=34816, type=L\n' |
	sfdisk -q "$T/big-disk.img" >/dev/null 2>&1 || fail sfdisk
dd if="$T/big.img" of="$T/big-disk.img" bs=1M seek=1 conv=notrunc status=none || fail dd
run_e2trim -n -p 1 "$T/big-disk.img"
row 17 "a filesystem that runs past its partition, also unclean"
fixture unsafe-mmp-fsck "$T/mmpfsck.img"
run_e2trim -n "$T/mmpfsck.img"
row 18 "MMP: e2fsck's mark"
fixture verify/verify-data "$T/vdata.img"
run_e2trim -n "$T/vdata.img"
row 19 "the bitmap marks in-use blocks free"

# 20, 21: how e2fsck ended (an e2fsck that says so, E2FSCK)
printf '#!/bin/sh\nexit 3\n' >"$T/fsck-reboot"
printf '#!/bin/sh\nexit 8\n' >"$T/fsck-fail"
chmod +x "$T/fsck-reboot" "$T/fsck-fail"
E2FSCK=$T/fsck-reboot run_e2trim --fsck "$T/clean.img"
row 20 "--fsck: e2fsck wants a reboot"
E2FSCK=$T/fsck-fail run_e2trim --fsck "$T/clean.img"
row 21 "--fsck: e2fsck failed for no reason e2trim knows"

fixture verify/verify-count-blocks "$T/vcount.img"
run_e2trim -n "$T/vcount.img"
row 22 "summary counts disagree"
fixture verify/verify-inode-uninit "$T/vinode.img"
run_e2trim -n "$T/vinode.img"
row 23 "a directory entry names an unused inode"

# 24: a filesystem at byte 0 under a table
truncate -s 20M "$T/at0.img"
mke2fs -q -t ext4 "$T/at0.img" 8M >/dev/null 2>&1 || fail mke2fs
printf 'label: dos\nstart=18432, size=16384, type=83\n' |
	sfdisk -q --wipe never "$T/at0.img" >/dev/null 2>&1 || fail sfdisk
run_e2trim -n -p 1 "$T/at0.img"
row 24 "a stale filesystem under the table"

# 25: an NBD server that cannot trim (nbdkit -r)
rm -f "$T/kit.sock"
mkfifo "$T/kit.pid" || fail mkfifo
exec 5<>"$T/kit.pid"
nbdkit -f -U "$T/kit.sock" -P "$T/kit.pid" -r file "$T/clean.img" &
PIDS+=("$!")
read -r -t 300 -u 5 pid || true
exec 5>&-
[ "$pid" = "${PIDS[-1]}" ] || fail "nbdkit did not start"
run_e2trim -n "nbd+unix:///?socket=$T/kit.sock"
row 25 "the NBD server cannot trim"
kill "$pid"
wait "$pid" 2>/dev/null

# 26: the image held by another qemu (read-write, as a VM holds it)
qemu-nbd --fork --pid-file "$T/holder.pid" -f raw -k "$T/holder.sock" "$T/clean.img" ||
	fail "qemu-nbd holder"
PIDS+=("$(cat "$T/holder.pid")")
run_e2trim -n "$T/clean.img"
row 26 "the image is open in another program"
kill "${PIDS[-1]}"
wait_exit "${PIDS[-1]}" "the qemu-nbd holder"

in_part1 "$T/clean.img" "$T/whole.img"
run_e2trim -n "$T/whole.img"
row 27 "a whole-disk image without -p"

# several targets: 32 every one refused, 64 some
run_e2trim -n "$T/zeros.img" "$T/unclean.img"
row 32 "several targets, every one refused"
run_e2trim -n "$T/clean.img" "$T/zeros.img"
row 64 "several targets, one refused"
# 130: SIGINT while held before the first discard
cp --sparse=always "$T/clean.img" "$T/stop.img"
pause_e2trim "$T/stop.img"
kill -INT "$(cat "$PAUSE.pid")"
resume_e2trim
row 130 "SIGINT"

# every row of README's table has its case
codes=$(sed -n '/^| code | meaning/,/^$/p' "$README" | sed -n 's/^| \([0-9][0-9]*\) |.*/\1/p')
[ -n "$codes" ] || fail "README: no exit-code table found"
for c in $codes; do
	[[ " ${DONE[*]} " == *" $c "* ]] || fail "README's row $c has no case here"
done
# the rows the issue found wrong say what e2trim does
grep -q '^| 10 |.*a loop device or mount uses the image' "$README" || fail "README row 10"
! grep -q '^| 12 |.*MMP inside an image' "$README" || fail "README row 12 still says 'MMP inside an image'"
finish
