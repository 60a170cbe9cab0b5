#!/bin/bash
# --zero-fill (zerofree's job): afterwards every free block reads zero,
# every used block is byte-identical (dumpe2fs's used ranges, read by
# python), e2fsck -fn is clean; on a host that punches holes the free
# space that is data in the image file is punched out unread, and -v
# counts exactly those bytes (against a count read here), elsewhere only
# the blocks that were not zero are zeroed (t_zero_fill_read holds the
# reading side); the allocated size drops by what was punched, holes stay
# holes, a second run writes nothing, a dry run changes nothing; in place,
# the image shrinks under qemu-img convert -S 4k, fallocate --dig-holes
# and gzip at least as much as after zerofree; the range and the minimum
# are honoured; on a loop device (root) the same holds; a reflink copy
# on XFS (root) is punched without costing its host a block, the file it
# shares them with byte-identical; and a user without root can zero-fill
# an image of its own.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
for tool in zerofree qemu-img; do
	command -v "$tool" >/dev/null || skip "no $tool (make deps)"
done

# punch_host DIR: whether the filesystem of DIR punches holes
punch_host() {
	local f
	f=$(mktemp "$1/punch.XXXXXX") || return 1
	head -c 8192 /dev/zero >"$f"
	fallocate --punch-hole --offset 0 --length 4096 "$f" 2>/dev/null
	local rc=$?
	rm -f "$f"
	return $rc
}

img=$T/fs.img
mkfs "$img" 256M -t ext4 -b 4096
age "$img" 3
# some free space zero already but allocated, some of it a hole
read -r a b < <(free_block_ranges "$img" | sort -k2,2n -k1,1n | awk '$2 - $1 > 64 {print; exit}')
dd if=/dev/zero of="$img" bs=4096 seek="$a" count=16 conv=notrunc status=none
fallocate --punch-hole --offset $(( (a + 32) * 4096 )) --length $((16 * 4096)) "$img"
sync
cp --sparse=never "$img" "$T/orig.img"
used=$(used_blocks_digest "$img")
read -r nz z < <(free_stats "$img")
{ [ "$nz" -gt 0 ] && [ "$z" -ge $((32 * 4096)) ]; } || fail "setup: free space $nz nonzero, $z zero"
alloc0=$(alloc_bytes "$img")
# what -v must count: on a host that punches, all the free space that is
# data in the file (the hole aside), zero or not, unread
if punch_host "$T"; then
	want_z=$((nz + z - 16 * 4096)) want_a=0
else
	want_z=$nz want_a=$((z - 16 * 4096))
fi

# a dry run counts, writes nothing
sum=$(sha_of "$img")
run_e2trim -n -v --zero-fill "$img"
assert_rc 0 "dry run"
assert_eq "$(zeroed_of)" "$want_z" "dry run: bytes that would be zeroed"
assert_eq "$(sha_of "$img")" "$sum" "dry run left the image as it was"

zero_filled image "$img" "$img" "$want_z" "$want_a" "$used"
alloc1=$(alloc_bytes "$img")
# punched: the allocation drops by what was zeroed, but for a block of
# the host's extent tree per ~340 extents split (1/256)
[ $((alloc0 - alloc1)) -ge $((want_z - want_z / 256 - (want_z ? 0 : 1))) ] ||
	fail "allocated $alloc0 -> $alloc1: less than the $want_z bytes zeroed freed"
[ "$alloc1" -le "$alloc0" ] || fail "allocated size grew: $alloc0 -> $alloc1"
python3 - "$img" $(( (a + 32) * 4096 )) $((16 * 4096)) <<'PY' || fail "the hole was filled"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
off, n = int(sys.argv[2]), int(sys.argv[3])
# SEEK_DATA from the hole's start must land at or past its end
d = os.lseek(fd, off, os.SEEK_DATA)
sys.exit(0 if d >= off + n else 1)
PY
note "zeroed $want_z bytes ($nz not zero), $want_a already zero, 64 KiB a hole; allocated $alloc0 -> $alloc1"

# again: nothing left to write
run_e2trim -v --zero-fill "$img"
assert_rc 0 "second --zero-fill"
assert_eq "$(zeroed_of)" 0 "second run zeroed"
assert_grep "0 requests" "$OUT" "second run: no writes"

# as good as zerofree for every way of shrinking an image, in place
cp --sparse=never "$T/orig.img" "$T/zf.img"
zerofree "$T/zf.img" || fail "zerofree"
mv "$img" "$T/e2.img"
for x in e2 zf; do
	qemu-img convert -q -S 4k -O raw "$T/$x.img" "$T/$x.conv" || fail "qemu-img convert"
	eval "gz_$x=\$(gzip -c \"\$T/\$x.img\" | wc -c)"
	fallocate --dig-holes "$T/$x.img"
	sync
	eval "conv_$x=\$(alloc_bytes \"\$T/\$x.conv\")"
	eval "dig_$x=\$(alloc_bytes \"\$T/\$x.img\")"
done
# shellcheck disable=SC2154  # set by eval above
{
	note "qemu-img convert -S 4k: e2trim $conv_e2, zerofree $conv_zf"
	note "fallocate --dig-holes:  e2trim $dig_e2, zerofree $dig_zf"
	note "gzip:                   e2trim $gz_e2, zerofree $gz_zf"
	[ "$conv_e2" -le "$conv_zf" ] || fail "qemu-img convert -S: larger than after zerofree"
	[ "$dig_e2" -le "$dig_zf" ] || fail "fallocate --dig-holes: larger than after zerofree"
	# zerofree rewrites the superblocks (times): a few bytes of gzip
	[ "$gz_e2" -le $((gz_zf + 64)) ] || fail "gzip: larger than after zerofree"
}
# the two differ only in what zerofree's close rewrites: superblock copies
cmp -l "$T/e2.img" "$T/zf.img" | awk '{b = int(($1 - 1) / 4096); print b}' | sort -u >"$T/diff.blocks"
dumpe2fs "$T/e2.img" 2>/dev/null | sed -n 's/.*superblock at \([0-9]*\).*/\1/p' | sort -u >"$T/sb.blocks"
[ -z "$(comm -23 "$T/diff.blocks" "$T/sb.blocks")" ] || fail "differs from zerofree's image outside the superblocks"

# range and minimum: only the extents trim would take are written
cp --sparse=never "$T/orig.img" "$img"
fs_bytes=$((256 << 20))
run_e2trim -v --zero-fill -o $((fs_bytes / 16)) -m 64K "$img"
assert_rc 0 "--zero-fill -o -m"
oracle_extents "$T/orig.img" $((64 << 10)) $((fs_bytes / 16)) >"$T/plan"
python3 - "$img" "$T/orig.img" "$T/plan" <<'PY' || fail "-o -m: wrote outside the plan or left a planned byte non-zero"
import sys
new, old, plan = open(sys.argv[1], "rb"), open(sys.argv[2], "rb"), sys.argv[3]
ext = [tuple(map(int, l.split())) for l in open(plan)]
pos = 0
size = new.seek(0, 2)
def same(a, b):
    new.seek(a); old.seek(a)
    while a < b:
        n = min(b - a, 1 << 20)
        if new.read(n) != old.read(n): sys.exit(1)
        a += n
for s, l in ext:
    same(pos, s)
    new.seek(s)
    if new.read(l).count(0) != l: sys.exit(1)
    pos = s + l
same(pos, size)
PY
note "-o/-m: $(wc -l <"$T/plan") extents zeroed, nothing else changed"

# SIGINT: the pieces in flight finish, the report says what was done,
# exit 130, and still no used block changed (the signal comes while
# e2trim is held at its first zero-filling report with bytes done: the
# pause point of src/cli/test_hooks.c)
cp --sparse=never "$T/orig.img" "$img"
pause_arm zero-filling
"$E2TRIM" --zero-fill "$img" 2>"$T/int.err" &
pid=$!
pause_wait
kill -INT "$pid" || fail "--zero-fill: e2trim is gone while held"
pause_release 1
pause_disarm
rc=0; wait "$pid" || rc=$?
assert_eq "$rc" 130 "--zero-fill interrupted: exit"
assert_grep "interrupted after .* of the free space, .* zeroed" "$T/int.err" "partial report"
assert_eq "$(used_blocks_digest "$img")" "$used" "interrupted: used blocks"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "interrupted: e2fsck -fn"

# excludes the other modes
run_e2trim --zero-fill -z "$img"
assert_rc 3 "--zero-fill -z"

# a block device (loop) holds the same
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	cp --sparse=never "$T/orig.img" "$img"
	# a hole in the backing file reads zero: skipped, not read
	fallocate --punch-hole --offset $(( (a + 32) * 4096 )) --length $((16 * 4096)) "$img"
	sync
	al0=$(alloc_bytes "$img")
	dev=$(loop_attach "$img")
	dm=$(cat "/sys/block/${dev#/dev/}/queue/discard_max_bytes" 2>/dev/null || echo 0)
	# the loop device discarded: the driver punches its file
	want_z=$nz want_a=$((z - 16 * 4096))
	if [ "$dm" -gt 0 ] && punch_host "$T"; then
		want_z=$((nz + z - 16 * 4096)) want_a=0
	fi
	zero_filled "$dev" "$img" "$dev" "$want_z" "$want_a" "$used"
	losetup -d "$dev"
	sync
	al1=$(alloc_bytes "$img")
	[ "$al1" -le "$al0" ] || fail "$dev: the backing file grew: $al0 -> $al1"
	[ "$want_a" != 0 ] || [ $((al0 - al1)) -ge $((want_z - want_z / 256)) ] ||
		fail "$dev: backing file $al0 -> $al1: less than the $want_z bytes zeroed freed"
	note "loop device: zeroed $want_z bytes, backing file allocated $al0 -> $al1"

	# a reflink copy on XFS: its blocks are the other file's too; punched
	# they stay the other file's, and the host spends no new block
	if command -v mkfs.xfs >/dev/null; then
		truncate -s 768M "$T/xfs.img"
		mkfs.xfs -q -m reflink=1 "$T/xfs.img" || fail "mkfs.xfs"
		xl=$(loop_attach "$T/xfs.img")
		mkdir -p "$T/xfs"
		mount "$xl" "$T/xfs" || fail "mount xfs"
		MOUNTS+=("$T/xfs")
		cp --sparse=never "$T/orig.img" "$T/xfs/base.img"
		cp --reflink=always "$T/xfs/base.img" "$T/xfs/copy.img" || fail "cp --reflink"
		sync
		base=$(sha_of "$T/xfs/base.img")
		u0=$(df -B1 --output=used "$T/xfs" | tail -1)
		# every free byte is data in the copy, the hole written over
		zero_filled "xfs reflink copy" "$T/xfs/copy.img" "$T/xfs/copy.img" \
			$((nz + z)) 0 "$used"
		u1=$(df -B1 --output=used "$T/xfs" | tail -1)
		assert_eq "$(sha_of "$T/xfs/base.img")" "$base" "xfs: the file the copy shares blocks with"
		# a block or two of the host's own metadata, no data block
		[ "$u1" -le $((u0 + (1 << 20))) ] ||
			fail "xfs: the host's used space grew: $u0 -> $u1"
		note "xfs reflink copy: zeroed $(zeroed_of) bytes, host used $u0 -> $u1"
		umount "$T/xfs"
	else
		left_out "the xfs reflink copy (make deps installs xfsprogs)"
	fi

	# a user on an image of its own, without root: as nobody
	chmod 755 "$T"
	mkdir -p "$T/user"
	cp --sparse=never "$T/orig.img" "$T/user/img"
	chown -R 65534:65534 "$T/user"
	want_z=$nz want_a=$z
	if punch_host "$T"; then want_z=$((nz + z)) want_a=0; fi
	E2TRIM_WRAP="setpriv --reuid=65534 --regid=65534 --clear-groups ${E2TRIM_WRAP:-}" \
		zero_filled nobody "$T/user/img" "$T/user/img" "$want_z" "$want_a" "$used"
	note "as nobody on its own image: zeroed $want_z bytes"
else
	left_out "the loop device, xfs and another user's parts (need root and a loop device)"
fi
finish
