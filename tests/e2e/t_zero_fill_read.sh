#!/bin/bash
# --zero-fill where the free space must be read first, and only the
# blocks that are not zero may be zeroed (t_zero_fill holds the other
# side: an image file's own data zeroed unread):
#  - an image file on tmpfs (no ZERO_RANGE, no FIEMAP): zeros written;
#  - a reflink copy on XFS: zeroing a shared block would cost the host a
#    new one, so only the blocks that are not zero are zeroed; the host's
#    used space grows by no more than those, and the file the copy shares
#    its blocks with is byte-identical;
#  - a block device read as such, here a loop device whose backing file
#    no longer has the name it was attached by (e2trim reads a loop
#    device's file where it can find it; on a thin volume WRITE ZEROES
#    would allocate what it touches, so a device is always read first).
# Each time -v counts exactly the free bytes that were not zero as zeroed
# and the rest as zero already (a count read here, from dumpe2fs's free
# ranges), every free block reads zero after, the used ones are
# byte-identical, and e2fsck -fn is clean.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
command -v mkfs.xfs >/dev/null || skip "no mkfs.xfs (make deps)"

zeroed_of() { sed -n 's/.*(\([0-9]*\) bytes) zeroed.*/\1/p' "$OUT"; }
already_of() { sed -n 's/.*(\([0-9]*\) bytes) already zero.*/\1/p' "$OUT"; }
host_used() { df -B1 --output=used "$1" | tail -1 | tr -d ' '; }

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

# zero_filled NAME IMG TARGET: --zero-fill TARGET (IMG or a device over
# it), read first: exact counts, free space zero, used blocks as before.
zero_filled() {
	local name=$1 img=$2 target=$3 nz2
	run_e2trim -v --zero-fill "$target"
	assert_rc 0 "$name: --zero-fill"
	assert_eq "$(zeroed_of)" "$nz" "$name: zeroed = the free bytes not zero"
	assert_eq "$(already_of)" "$z" "$name: already zero"
	sync
	read -r nz2 _ < <(free_stats "$img")
	assert_eq "$nz2" 0 "$name: free bytes not zero after"
	assert_eq "$(used_blocks_digest "$img")" "$used" "$name: used blocks"
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "$name: e2fsck -fn after"
}

# 1. tmpfs: neither FIEMAP nor ZERO_RANGE; the zeros are written
mkdir -p "$T/shm"
mount -t tmpfs -o size=160m tmpfs "$T/shm" || fail "mount tmpfs"
MOUNTS+=("$T/shm")
cp --sparse=never "$orig" "$T/shm/img"
a0=$(alloc_bytes "$T/shm/img")
zero_filled tmpfs "$T/shm/img" "$T/shm/img"
a1=$(alloc_bytes "$T/shm/img")
[ "$a1" -le "$a0" ] || fail "tmpfs: allocated size grew: $a0 -> $a1"
note "tmpfs: $nz zeroed, $z already zero, allocated $a0 -> $a1"
umount "$T/shm"

# 2. XFS with reflinks: the copy shares every block with base.img
truncate -s 512M "$T/xfs.img"
mkfs.xfs -q -m reflink=1 "$T/xfs.img" || fail "mkfs.xfs"
xl=$(loop_attach "$T/xfs.img")
mkdir -p "$T/xfs"
mount "$xl" "$T/xfs" || fail "mount xfs"
MOUNTS+=("$T/xfs")
cp --sparse=never "$orig" "$T/xfs/base.img"
cp --reflink=always "$T/xfs/base.img" "$T/xfs/copy.img" || fail "cp --reflink"
sync
base=$(file_md5 "$T/xfs/base.img")
u0=$(host_used "$T/xfs")
zero_filled "xfs reflink" "$T/xfs/copy.img" "$T/xfs/copy.img"
sync
u1=$(host_used "$T/xfs")
assert_eq "$(file_md5 "$T/xfs/base.img")" "$base" "xfs: the reflink source"
# zeroing the zero blocks too would have cost $z more
[ $((u1 - u0)) -le $((nz + (1 << 20))) ] ||
	fail "xfs: the host's used space grew by $((u1 - u0)), more than the $nz bytes zeroed"
note "xfs reflink copy: $nz zeroed, $z already zero; host used +$((u1 - u0)) bytes"
umount "$T/xfs"

# 3. a block device: a loop device over a file whose name is gone (the
# file lives on under a second link)
cp --sparse=never "$orig" "$T/dev.img"
ln "$T/dev.img" "$T/dev.link"
read -r _ unw0 < <(extent_bytes "$T/dev.link")
dl=$(loop_attach "$T/dev.img")
rm "$T/dev.img"
grep -q "(deleted)" "/sys/block/${dl#/dev/}/loop/backing_file" ||
	fail "setup: $dl's backing file still has its name"
zero_filled "$dl" "$T/dev.link" "$dl"
losetup -d "$dl"
read -r _ unw1 < <(extent_bytes "$T/dev.link")
note "$dl: $nz zeroed, $z already zero; backing file unwritten $unw0 -> $unw1"
exit 0
