#!/bin/bash
# --zero-fill where the free space must be read first, and only the
# blocks that are not zero may be zeroed (t_zero_fill holds the other
# side: an image file's data punched out unread):
#  - an image file on ramfs, which can neither punch holes nor zero
#    ranges: zeros are written, and only where there were none;
#  - a block device read as such, here a loop device whose backing file
#    no longer has the name it was attached by (e2trim reads a loop
#    device's file where it can find it; a device is otherwise always
#    read first: on a thin volume WRITE ZEROES would allocate what it
#    touches, and a discard need not read back as zeros).
# Each time -v counts exactly the free bytes that were not zero as zeroed
# and the rest as zero already (a count read here, from dumpe2fs's free
# ranges), every free block reads zero after, the used ones are
# byte-identical, and e2fsck -fn is clean.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

# An aged ext4 whose free space is half 0x5a, half zeros (every other
# free extent), all of it allocated in the file.
orig=$T/orig.img
mkfs "$orig" 64M -t ext4 -b 4096
age "$orig" 5
free_block_ranges "$orig" | awk 'NR % 2 == 0' | while read -r a b; do
	dd if=/dev/zero of="$orig" bs=4096 seek="$a" count=$((b - a + 1)) \
		conv=notrunc status=none
done
sync
used=$(used_blocks_digest "$orig")
read -r nz z < <(free_stats "$orig")
{ [ "$nz" -gt $((4 << 20)) ] && [ "$z" -gt $((4 << 20)) ]; } ||
	fail "setup: free space $nz not zero, $z zero"
note "free space: $nz bytes not zero, $z zero (allocated)"

# 1. ramfs: no fallocate at all; the zeros are written
mkdir -p "$T/ram"
mount -t ramfs ramfs "$T/ram" || fail "mount ramfs"
MOUNTS+=("$T/ram")
cp --sparse=never "$orig" "$T/ram/img"
fallocate --punch-hole --offset 0 --length 4096 "$T/ram/img" 2>/dev/null &&
	fail "setup: ramfs punched a hole"
zero_filled ramfs "$T/ram/img" "$T/ram/img" "$nz" "$z" "$used"
note "ramfs: $nz zeroed (written), $z already zero"
umount "$T/ram"

# 2. a block device: a loop device over a file whose name is gone (the
# file lives on under a second link)
cp --sparse=never "$orig" "$T/dev.img"
ln "$T/dev.img" "$T/dev.link"
read -r _ unw0 < <(extent_bytes "$T/dev.link")
dl=$(loop_attach "$T/dev.img")
rm "$T/dev.img"
grep -q "(deleted)" "/sys/block/${dl#/dev/}/loop/backing_file" ||
	fail "setup: $dl's backing file still has its name"
zero_filled "$dl" "$T/dev.link" "$dl" "$nz" "$z" "$used"
losetup -d "$dl"
read -r _ unw1 < <(extent_bytes "$T/dev.link")
note "$dl: $nz zeroed, $z already zero; backing file unwritten $unw0 -> $unw1"
exit 0
