#!/bin/bash
# --zero-fill (zerofree's job): afterwards every free block reads zero,
# every used block is byte-identical (dumpe2fs's used ranges, read by
# python), e2fsck -fn is clean; on a host that zeroes ranges (ext4, XFS)
# the free space that is data in the image file is zeroed unread, as
# unwritten extents (FIEMAP), and -v counts exactly those bytes (against
# a count read here), elsewhere only the blocks that were not zero are
# (t_zero_fill_read holds the reading side); holes stay
# holes (the allocated size of a partly sparse image does not grow), a
# second run writes nothing, a dry run changes nothing; the image shrinks
# under qemu-img convert -S 4k, fallocate --dig-holes and gzip exactly as
# much as after zerofree on a copy; the range and the minimum are
# honoured; and on a loop device (root) the same holds.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
for tool in zerofree qemu-img; do
	command -v "$tool" >/dev/null || skip "no $tool (make deps)"
done

zeroed_of() { sed -n 's/.*(\([0-9]*\) bytes) zeroed.*/\1/p' "$OUT"; }
already_of() { sed -n 's/.*(\([0-9]*\) bytes) already zero.*/\1/p' "$OUT"; }

# unread_host FILE: whether --zero-fill zeroes FILE's data unread there
unread_host() {
	[ "$(extent_bytes "$1")" != "- -" ] || return 1
	case $(stat -f -c %T "$1") in ext2/ext3|xfs) return 0 ;; esac
	return 1
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
read -r map0 unw0 < <(extent_bytes "$img")
# what -v must count: on a host that zeroes ranges, all the free space
# that is data in the file (the hole aside), zero or not, unread
if unread_host "$img"; then
	want_z=$((nz + z - 16 * 4096)) want_a=0
else
	want_z=$nz want_a=$((z - 16 * 4096))
fi

# a dry run counts, writes nothing
sum=$(file_md5 "$img")
run_e2trim -n -v --zero-fill "$img"
assert_rc 0 "dry run"
assert_eq "$(zeroed_of)" "$want_z" "dry run: bytes that would be zeroed"
assert_eq "$(file_md5 "$img")" "$sum" "dry run left the image as it was"

run_e2trim -v --zero-fill "$img"
assert_rc 0 "--zero-fill"
assert_eq "$(zeroed_of)" "$want_z" "bytes zeroed"
assert_eq "$(already_of)" "$want_a" "already zero (the hole not counted)"
sync
read -r nz2 _ < <(free_stats "$img")
assert_eq "$nz2" 0 "free bytes not zero after"
assert_eq "$(used_blocks_digest "$img")" "$used" "used blocks"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck -fn after --zero-fill"
alloc1=$(alloc_bytes "$img")
read -r map1 unw1 < <(extent_bytes "$img")
# the host's extent tree may take a block per ~340 extents split: 1/256
[ "$alloc1" -le $((alloc0 + alloc0 / 256)) ] || fail "allocated size grew: $alloc0 -> $alloc1"
if [ "$map0" != - ]; then
	[ "$map1" -le "$map0" ] || fail "data extents grew: $map0 -> $map1 bytes"
	# ZERO_RANGE made them unwritten (a host with it: ext4 and xfs)
	case $(stat -f -c %T "$img") in
	ext2/ext3|xfs)
		[ $((unw1 - unw0)) -ge "$want_z" ] ||
			fail "zeroed $want_z bytes, but only $((unw1 - unw0)) became unwritten" ;;
	esac
fi
python3 - "$img" $(( (a + 32) * 4096 )) $((16 * 4096)) <<'PY' || fail "the hole was filled"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
off, n = int(sys.argv[2]), int(sys.argv[3])
# SEEK_DATA from the hole's start must land at or past its end
d = os.lseek(fd, off, os.SEEK_DATA)
sys.exit(0 if d >= off + n else 1)
PY
note "zeroed $want_z bytes ($nz not zero), $want_a already zero, 64 KiB a hole; allocated $alloc0 -> $alloc1, unwritten $unw0 -> $unw1"

# again: nothing left to write
run_e2trim -v --zero-fill "$img"
assert_rc 0 "second --zero-fill"
assert_eq "$(zeroed_of)" 0 "second run zeroed"
assert_grep "0 requests" "$OUT" "second run: no writes"

# as good as zerofree for every way of shrinking an image
cp --sparse=never "$T/orig.img" "$T/zf.img"
zerofree "$T/zf.img" || fail "zerofree"
cp --sparse=never "$img" "$T/e2.img"
for x in e2 zf; do
	qemu-img convert -q -S 4k -O raw "$T/$x.img" "$T/$x.conv" || fail "qemu-img convert"
	cp --sparse=never "$T/$x.img" "$T/$x.dig"
	fallocate --dig-holes "$T/$x.dig"
	sync
	eval "conv_$x=\$(alloc_bytes \"\$T/\$x.conv\")"
	eval "dig_$x=\$(alloc_bytes \"\$T/\$x.dig\")"
	eval "gz_$x=\$(gzip -c \"\$T/\$x.img\" | wc -c)"
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
# exit 32, and still no used block changed (each progress report is
# slowed down so that the signal comes mid-run)
cp --sparse=never "$T/orig.img" "$img"
E2TRIM_PROGRESS_DELAY_MS=200 "$E2TRIM" --zero-fill --progress "$img" 2>"$T/int.err" &
pid=$!
sleep 1
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
assert_eq "$rc" 32 "--zero-fill interrupted: exit"
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
	read -r map0 unw0 < <(extent_bytes "$img")
	dev=$(loop_attach "$img")
	wz=$(cat "/sys/block/${dev#/dev/}/queue/write_zeroes_max_bytes" 2>/dev/null || echo 0)
	# WRITE ZEROES through the loop device: ZERO_RANGE on the file
	want_z=$nz want_a=$((z - 16 * 4096))
	if [ "$wz" -gt 0 ] && unread_host "$img"; then
		want_z=$((nz + z - 16 * 4096)) want_a=0
	fi
	run_e2trim -v --zero-fill "$dev"
	assert_rc 0 "--zero-fill on $dev"
	assert_eq "$(zeroed_of)" "$want_z" "$dev: bytes zeroed"
	assert_eq "$(already_of)" "$want_a" "$dev: already zero (the backing file's hole not counted)"
	losetup -d "$dev"
	read -r map1 unw1 < <(extent_bytes "$img")
	if [ "$map0" != - ]; then
		[ "$map1" -le "$map0" ] || fail "$dev: backing file's data extents grew: $map0 -> $map1"
		if [ "$wz" -gt 0 ] && unread_host "$img"; then
			[ $((unw1 - unw0)) -ge "$want_z" ] ||
				fail "$dev: zeroed $want_z bytes, but only $((unw1 - unw0)) became unwritten"
		fi
	fi
	read -r nz2 _ < <(free_stats "$img")
	assert_eq "$nz2" 0 "$dev: free bytes not zero after"
	assert_eq "$(used_blocks_digest "$img")" "$used" "$dev: used blocks"
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "$dev: e2fsck -fn after"
	note "loop device: zeroed $want_z bytes, backing file unwritten $unw0 -> $unw1"
else
	note "not root: loop device part skipped"
fi
exit 0
