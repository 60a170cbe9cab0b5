#!/bin/bash
# A GPT written for a 4Kn disk (issue 41, point 5): its header is at LBA
# 1 = byte 4096, its entries count 4096-byte LBAs, and its protective
# MBR is at byte 0 as on any disk.  The image is partitioned through a
# loop device with 4096-byte sectors (sfdisk 2.38 has no --sector-size
# for a file), then read as a plain file:
#  A. partition 1 holds an aged ext4 of its own size, partition 2 random
#     bytes: -p 1 trims partition 1 (exit 0, its files survive, e2fsck
#     -fn clean, space given back) and partition 2's bytes are identical;
#     today's main read the table at byte 512 only and called it damaged
#     (24).  Without -p the image is a whole disk (27) listing
#     partition 1's ext4.
#  B. partition 1 holds an ext4 twice its size (made over both
#     partitions, then repartitioned): ?offset=<partition 1's start> is
#     refused with 17 naming the gpt table and resize2fs, not one byte of
#     the image changes; today's main left ?offset= bounded by nothing
#     and trimmed partition 2's bytes (exit 0).
#  C. a table that cannot be read whole at either size (both headers'
#     signatures spoiled) leaves ?offset= bounded by nothing: refused
#     with 24, the image unchanged.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

p1=$((256 * 4096)) p2=$((2304 * 4096)) psize=$((2048 * 4096))
# disk4k IMG: a 64 MiB image with a 4Kn GPT, partitions 1 and 2 of 8 MiB
disk4k() {
	local l
	truncate -s 64M "$1"
	l=$(loop_attach "$1" --sector-size 4096)
	printf 'label: gpt\nstart=256, size=2048, type=linux\nstart=2304, size=2048, type=linux\n' |
		sfdisk -q --no-reread "$l" 2>/dev/null || fail "sfdisk on $l"
	losetup -d "$l" || fail "losetup -d $l"
	[ "$(dd if="$1" bs=1 skip=4096 count=8 status=none)" = "EFI PART" ] ||
		fail "no GPT header at byte 4096"
	[ "$(dd if="$1" bs=1 skip=512 count=8 status=none | tr -d "\\0")" != "EFI PART" ] ||
		fail "a GPT header at byte 512 too"
	head -c "$psize" /dev/urandom |
		dd of="$1" bs=1M oflag=seek_bytes seek=$p2 conv=notrunc status=none
}
p2_sum() { dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip=$p2 count=$psize status=none | sha256sum; }

# A. -p 1 on a 4Kn GPT trims partition 1 only
img=$T/a.img
disk4k "$img"
mke2fs -q -F -t ext4 -b 4096 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$p1 "$img" 8M ||
	fail "mke2fs in partition 1"
age_part "$img" $p1 20 5 16
before2=$(p2_sum "$img")
for i in 1 3 5 19; do
	dfs_read "$img?offset=$p1" "cat /f$i" | cmp -s - "$T/blob$i" || fail "f$i before"
done
alloc0=$(alloc_bytes "$img")
run_e2trim -v -p 1 "$img"
assert_rc 0 "-p 1 on a 4Kn GPT"
assert_eq "$(p2_sum "$img")" "$before2" "partition 2's bytes after -p 1"
for i in 1 3 5 19; do
	dfs_read "$img?offset=$p1" "cat /f$i" | cmp -s - "$T/blob$i" || fail "f$i after the trim"
done
e2fsck -fn "$img?offset=$p1" >/dev/null 2>&1 || fail "e2fsck -fn after -p 1"
[ "$(alloc_bytes "$img")" -lt "$alloc0" ] || fail "-p 1 gave no space back"
# the image without -p: a whole disk, its partitions read from the table
run_e2trim -n "$img"
assert_rc 27 "a 4Kn GPT image without -p"
assert_grep "partition: 1 (ext4)" "$ERR" "without -p: lists partition 1"

# B. ?offset= onto partition 1 whose filesystem runs over partition 2
img=$T/b.img
disk4k "$img"
mke2fs -q -F -t ext4 -b 4096 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$p1 "$img" 16M ||
	fail "mke2fs of 16 MiB at partition 1"
# partition 2's bytes again, over the filesystem's free blocks beyond 1
disk_sum() { sha_of "$img"; }
head -c "$psize" /dev/urandom |
	dd of="$img" bs=1M oflag=seek_bytes seek=$p2 conv=notrunc status=none
sum=$(disk_sum)
for opt in -v -n; do
	run_e2trim "$opt" "$img?offset=$p1"
	assert_rc 17 "$opt ?offset= onto partition 1 with a 16 MiB filesystem"
	assert_grep "gpt table" "$ERR" "$opt ?offset=: names the table"
	assert_grep "resize2fs" "$ERR" "$opt ?offset=: names the fix"
	assert_eq "$(disk_sum)" "$sum" "$opt ?offset=: the image's sha256"
done

# C. no readable table at either size: ?offset= is refused, not unbounded
python3 - "$img" <<'EOF' || fail "spoiling both GPT headers"
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(0, 2)
    end = f.tell()
    for off in (4096, end - 4096):
        f.seek(off)
        f.write(b"NOT PART")
EOF
sum=$(disk_sum)
run_e2trim -v "$img?offset=$p1"
assert_rc 24 "?offset= into a GPT damaged at both sector sizes"
assert_grep "GPT header is damaged" "$ERR" "?offset= on a damaged GPT: says why"
assert_eq "$(disk_sum)" "$sum" "?offset= on a damaged GPT: the image's sha256"
finish
