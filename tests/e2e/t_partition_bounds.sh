#!/bin/bash
# Every layer that bounds a target is read and must agree (issue 33,
# point 5).  Whole-disk images with sfdisk-made tables:
#  A. partition 1 (32 MiB, dos) holds an ext4 that claims 48 MiB (shrunk
#     without resize2fs); partition 2, right after it, an aged ext4 with
#     files.  -p 1, disk.img?offset=<start of 1> (trim and dry run) and a
#     loop device made with losetup -o <start of 1> and no size limit
#     are all refused with 17, the message naming resize2fs and the
#     partition, and the whole image's sha256 is unchanged.  A clean
#     ?offset= on partition 2, and losetup -o on it, still trim: the files
#     survive (sha256), e2fsck -fn is clean, the image gave space back.
#  B. a disk that held a whole-disk ext4 and was repartitioned (dos: a
#     gpt's entries would overwrite the superblock at byte 1024)
#     without wiping it: the superblock at byte 0 lies over partition
#     1's and 2's filesystems.  Plain e2trim disk.img (trim, dry run) and
#     a loop device over it (no offset, no -P) are refused with 24, the
#     message naming -p N and wipefs, sha256 unchanged; a loop device at
#     partition 1's start (losetup -o) is partition 1's filesystem: fine.
#  C. an ext4 in the gap between two partitions (from partition 1's last
#     byte + 1, where no entry holds it) that claims 8 MiB past partition
#     2's start: ?offset= (trim and dry run) and losetup -o at its start
#     are refused with 17, the message naming the space before the next
#     partition, and partition 2 (the whole image) keeps its sha256.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

# files FS: "name sha256" of every file in the filesystem FS
files() {
	local f
	for f in $(dfs_read "$1" "ls -p /" | awk -F/ '$6 ~ /^f[0-9]/ {print $6}' | sort); do
		echo "$f $(dfs_read "$1" "cat /$f" | sha256sum | cut -d' ' -f1)"
	done
}
# refused_unchanged RC PATTERN WHAT ARGS...: e2trim ARGS exits RC saying
# PATTERN and the image's bytes stay as they were
refused_unchanged() {
	local rc=$1 pat=$2 what=$3; shift 3
	run_e2trim "$@"
	assert_rc "$rc" "$what"
	assert_grep "$pat" "$ERR" "$what: message"
	assert_eq "$(sha_of "$img")" "$sum" "$what: the image's sha256"
}

# A. a shrunk partition 1
img=$T/shrunk.img
truncate -s 128M "$img"
p1=$((2048 * 512)) p2=$(((2048 + 65536) * 512))
printf 'label: dos\nstart=2048, size=65536, type=83\nstart=67584, type=83\n' |
	sfdisk -q "$img" || fail "sfdisk"
mke2fs -q -F -t ext4 -b 4096 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$p1 "$img" 48M ||
	fail "mke2fs of 48 MiB in partition 1"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$p2 "$img" 64M ||
	fail "mke2fs in partition 2"
age_part "$img" $p2 40 9 37
files "$img?offset=$p2" >"$T/files2"
[ "$(wc -l <"$T/files2")" -ge 20 ] || fail "partition 2 keeps too few files"
# the fixture: partition 1's filesystem says it owns free blocks over 2
dumpe2fs -h "$img?offset=$p1" 2>/dev/null | grep -q '^Block count: *12288$' ||
	fail "partition 1's filesystem does not claim 48 MiB"
sum=$(sha_of "$img")

refused_unchanged 17 "resize2fs" "-p 1 on the shrunk partition" -v -p 1 "$img"
assert_grep "partition 1 holds only 33554432" "$ERR" "-p 1: names the partition"
for opt in -n -v; do
	refused_unchanged 17 "resize2fs" "?offset= of partition 1 ($opt)" "$opt" "$img?offset=$p1"
	assert_grep "partition 1 of the image's dos table, where it starts, holds only 33554432" \
		"$ERR" "?offset= ($opt): names the partition"
done
loop=$(loop_attach "$img" -o $p1)
refused_unchanged 17 "resize2fs" "losetup -o on partition 1" -v "$loop"
assert_grep "partition 1 of $img (behind $loop)'s dos table" "$ERR" "loop -o: names the file and partition"
losetup -d "$loop"
note "shrunk partition 1: -p 1, ?offset= and losetup -o refused (17), image unchanged"

# a clean ?offset= and losetup -o on partition 2 still trim
alloc0=$(alloc_bytes "$img")
run_e2trim -v "$img?offset=$p2"
assert_rc 0 "?offset= of partition 2"
alloc1=$(alloc_bytes "$img")
[ "$alloc1" -lt $((alloc0 - (4 << 20))) ] || fail "?offset= of partition 2 gave back $((alloc0 - alloc1)) bytes"
files "$img?offset=$p2" | cmp -s - "$T/files2" || fail "partition 2's files after ?offset="
e2fsck -fn "$img?offset=$p2" >/dev/null 2>&1 || fail "e2fsck -fn of partition 2 after ?offset="
age_part "$img" $p2 40 9 37
loop=$(loop_attach "$img" -o $p2)
run_e2trim -v "$loop"
assert_rc 0 "losetup -o on partition 2"
losetup -d "$loop"
files "$img?offset=$p2" | cmp -s - "$T/files2" || fail "partition 2's files after losetup -o"
e2fsck -fn "$img?offset=$p2" >/dev/null 2>&1 || fail "e2fsck -fn of partition 2 after losetup -o"
note "partition 2: ?offset= and losetup -o trimmed, $((alloc0 - alloc1)) bytes given back the first time"

# B. a stale whole-disk ext4 under a new dos table
img=$T/stale.img
truncate -s 128M "$img"
mke2fs -q -F -t ext4 -b 4096 -N 64 -U "$UUID" -E hash_seed="$UUID",nodiscard "$img" ||
	fail "mke2fs on the whole disk"
printf 'label: dos\nstart=2048, size=98304, type=83\nstart=100352, size=131072, type=83\n' |
	sfdisk -q --wipe never "$img" || fail "sfdisk over the old filesystem"
q1=$((2048 * 512)) q2=$((100352 * 512))
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$q1 "$img" 48M ||
	fail "mke2fs in partition 1"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$q2 "$img" 64M ||
	fail "mke2fs in partition 2"
age_part "$img" $q2 30 7 41
dumpe2fs -h "$img" 2>/dev/null | grep -q '^Filesystem magic number: *0xEF53' ||
	fail "the whole-disk superblock is gone"
sum=$(sha_of "$img")
for opt in -n -v; do
	refused_unchanged 24 "wipefs" "stale superblock at 0 ($opt)" "$opt" "$img"
	assert_grep "beside a dos table with partitions 1, 2" "$ERR" "stale ($opt): names the table"
	assert_grep "give -p N" "$ERR" "stale ($opt): names -p N"
	# one fix, this one: the table may be right (not "fix the table")
	! grep -q "fix the table" "$ERR" || { cat "$ERR"; fail "stale ($opt): a second fix, the table's"; }
done
loop=$(loop_attach "$img")
refused_unchanged 24 "wipefs" "stale superblock at 0, loop device" -v "$loop"
losetup -d "$loop"
loop=$(loop_attach "$img" -o $q1)
run_e2trim -n "$loop"
assert_rc 0 "losetup -o on partition 1 of the repartitioned disk"
losetup -d "$loop"
assert_eq "$(sha_of "$img")" "$sum" "the repartitioned disk after a dry run"
note "stale whole-disk superblock under a dos table: refused (24) as a file and a loop device, unchanged"

# C. a filesystem in a gap, larger than the gap
img=$T/gap.img
truncate -s 128M "$img"
printf 'label: dos\nstart=2048, size=32768, type=83\nstart=67584, size=131072, type=83\n' |
	sfdisk -q "$img" || fail "sfdisk with a gap"
g=$(((2048 + 32768) * 512)) r2=$((67584 * 512))
# 24 MiB from the gap's first byte: the last 8 MiB are partition 2's
mke2fs -q -F -t ext4 -b 4096 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$g "$img" 24M ||
	fail "mke2fs of 24 MiB in the 16 MiB gap"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$r2 "$img" 64M ||
	fail "mke2fs in partition 2 (gap disk)"
age_part "$img" $r2 30 7 43
dumpe2fs -h "$img?offset=$g" 2>/dev/null | grep -q '^Block count: *6144$' ||
	fail "the gap's filesystem does not claim 24 MiB"
sum=$(sha_of "$img")
for opt in -n -v; do
	refused_unchanged 17 "resize2fs" "?offset= in the gap ($opt)" "$opt" "$img?offset=$g"
	assert_grep "the space before the next partition of the image's dos table" \
		"$ERR" "?offset= in the gap ($opt): names the next partition"
done
loop=$(loop_attach "$img" -o $g)
refused_unchanged 17 "resize2fs" "losetup -o in the gap" -v "$loop"
losetup -d "$loop"
e2fsck -fn "$img?offset=$r2" >/dev/null 2>&1 || fail "e2fsck -fn of partition 2 of the gap disk"
note "a filesystem in the gap past partition 2's start: ?offset= and losetup -o refused (17), partition 2 unchanged"
exit 0
