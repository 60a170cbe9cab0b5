#!/bin/bash
# Group descriptors e2fsck would not trust (src/verify/verify_rules.md A2).  When
# the primary descriptors fail ext2fs_check_desc(), e2fsck says "Group
# descriptors look bad... trying backup blocks", opens a backup superblock
# and its descriptors, clears every UNINIT flag and itable_unused, and its
# pass 1 reads every inode.  A file that the primary hides (its inode in
# group 0's unused tail, its blocks and inode marked free, the counts kept
# right: e2fsck -fn of the primary alone is clean) comes back.  e2trim
# reads the primary; it must refuse (16, naming e2fsck -f) wherever
# ext2fs_check_desc() fails, and change no byte.  Every condition of
# ext2fs_check_desc() has a case: a table on another group's bitmap,
# inside another group's inode table, on a superblock copy, its
# descriptors or reserved GDT blocks (also with meta_bg), outside its
# group without flex_bg, past the end.  debugfs writes the primary
# superblock and descriptors only, so the backups keep what mke2fs (and
# the first write) put there.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

# bg IMG GROUP FIELD: a descriptor field as dumpe2fs prints it
loc() {
	dumpe2fs "$1" 2>/dev/null | awk -v g="Group $2:" -v f="$3" '
		index($0, g) == 1 { on = 1; next }
		/^Group / { on = 0 }
		on && index($0, f) { sub(/.* at /, ""); sub(/[- ].*/, ""); print; exit }'
}

# refused IMG WHAT: e2fsck turns to the backup; e2trim refuses, changes nothing
refused() {
	local img=$1 what=$2 before
	e2fsck -fn "$img" 2>&1 | grep -q "Group descriptors look bad... trying backup blocks" ||
		fail "$what: e2fsck keeps the primary descriptors"
	before=$(sha_of "$img")
	run_e2trim -n -v --list "$img"
	assert_rc 16 "$what (dry run)"
	assert_grep "damaged group descriptor" "$ERR" "$what"
	assert_grep "run e2fsck -f" "$ERR" "$what: names the fix"
	[ ! -s "$OUT" ] || { cat "$OUT" >&2; fail "$what: printed a plan"; }
	run_e2trim -v "$img"
	assert_rc 16 "$what (trim)"
	assert_eq "$(sha_of "$img")" "$before" "$what: image changed"
	note "exit 16: $what: $(sed 's/.*(\(group [^)]*)\).*/\1/' "$ERR")"
}

img=$T/a.img
D=$T/data
head -c 300000 /dev/urandom >"$D"

# --- 1. a file only the backup descriptors show -----------------------------
# 64 MiB of 1 KiB blocks: 8 groups, flex_bg, uninit_bg (INODE_UNINIT groups
# whose inode bitmap is not read)
mkfs "$img" 64M -t ext4 -b 1024 -O ^metadata_csum,uninit_bg
printf 'write %s f\n' "$D" | dfs_write "$img"
ino=$(dfs_read "$img" "stat f" | awk '/^Inode:/ {print $2; exit}')
assert_eq "$ino" 12 "f's inode"
ipg=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Inodes per group:/ {print $4}')
{
	echo "unlink f"
	echo "freei <12>"
	dfs_read "$img" "blocks f" | tr ' ' '\n' | awk 'NF {print "freeb " $1}'
	echo "set_bg 0 itable_unused $((ipg - 11))"
	echo "set_bg 0 checksum calc"
} | dfs_write "$img"
recount_free "$img"
e2fsck -fn "$img" >"$T/fsck.log" 2>&1 ||
	{ cat "$T/fsck.log" >&2; fail "the primary alone is not clean"; }
# group 1's inode bitmap on group 2's block bitmap
printf 'set_bg 1 inode_bitmap %s\nset_bg 1 checksum calc\n' \
	"$(loc "$img" 2 "Block bitmap")" | dfs_write "$img"
cp --sparse=always "$img" "$T/copy.img"
e2fsck -fy "$T/copy.img" >"$T/fsck.log" 2>&1 || [ $? -lt 4 ] ||
	{ cat "$T/fsck.log" >&2; fail "e2fsck -fy"; }
grep -q "trying backup blocks" "$T/fsck.log" || fail "e2fsck kept the primary"
dfs_read "$T/copy.img" "dump <12> $T/back"
cmp -s "$T/back" "$D" || fail "e2fsck -fy did not bring f back byte for byte"
rm -f "$T/copy.img" "$T/back"
refused "$img" "inode bitmap on another group's block bitmap"

# --- 2. every other way ext2fs_check_desc() fails ---------------------------
# case MKE2FS-OPTIONS -- DEBUGFS-COMMAND...: damage a fresh filesystem
case_() {
	local opts=() what
	while [ "$1" != -- ]; do opts+=("$1"); shift; done; shift
	what=$1; shift
	mkfs "$img" 64M "${opts[@]}"
	printf 'write %s f\n' "$D" | dfs_write "$img"
	{ printf '%s\n' "$@"; } | dfs_write "$img"
	refused "$img" "$what"
}
ext4k=(-t ext4 -b 1024)
mkfs "$img" 64M "${ext4k[@]}"
bb2=$(loc "$img" 2 "Block bitmap"); ib2=$(loc "$img" 2 "Inode bitmap")
it2=$(loc "$img" 2 "Inode table"); it3=$(loc "$img" 3 "Inode table")
case_ "${ext4k[@]}" -- "block bitmap on another group's inode bitmap" \
	"set_bg 3 block_bitmap $ib2" "set_bg 3 checksum calc"
case_ "${ext4k[@]}" -- "block bitmap inside another group's inode table" \
	"set_bg 5 block_bitmap $((it2 + 7))" "set_bg 5 checksum calc"
case_ "${ext4k[@]}" -- "inode table overlapping the next one" \
	"set_bg 2 inode_table $((it2 + 1))" "set_bg 2 checksum calc"
case_ "${ext4k[@]}" -- "inode table over a block bitmap" \
	"set_bg 3 inode_table $((bb2 - 2))" "set_bg 3 checksum calc"
case_ "${ext4k[@]}" -- "inode bitmap on group 1's backup superblock" \
	"set_bg 4 inode_bitmap 8193" "set_bg 4 checksum calc"
case_ "${ext4k[@]}" -- "inode table over the reserved GDT blocks" \
	"set_bg 6 inode_table 3" "set_bg 6 checksum calc"
# a backup's reserved GDT blocks: group 1's copy is its superblock at
# 8193, one descriptor block, then s_reserved_gdt_blocks of them
rsv=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Reserved GDT blocks:/ {print $4}')
[ "${rsv:-0}" -gt 8 ] || fail "no reserved GDT blocks to place a bitmap on"
case_ "${ext4k[@]}" -- "inode bitmap on group 1's backup reserved GDT blocks" \
	"set_bg 4 inode_bitmap $((8195 + rsv - 1))" "set_bg 4 checksum calc"
case_ "${ext4k[@]}" -- "two groups, one inode table" \
	"set_bg 7 inode_table $it3" "set_bg 7 checksum calc"
case_ -t ext4 -b 1024 -O meta_bg,^resize_inode -- \
	"block bitmap on a meta_bg descriptor block" \
	"set_bg 6 block_bitmap 8194" "set_bg 6 checksum calc"
case_ -t ext4 -b 1024 -O ^flex_bg -- "inode bitmap outside its group (no flex_bg)" \
	"set_bg 2 inode_bitmap 8300" "set_bg 2 checksum calc"
case_ "${ext4k[@]}" -- "inode table past the end" \
	"set_bg 1 inode_table 65500" "set_bg 1 checksum calc"

# --- 3. e2fsck's other turns away from the primary (verify_rules.md A1, A6) -
# A superblock whose checksum fails: e2fsck opens a backup ("Superblock
# invalid, trying backup blocks"), its descriptors with it.
mkfs "$img" 64M "${ext4k[@]}"
printf 'write %s f\n' "$D" | dfs_write "$img"
printf '\x5a' | dd of="$img" bs=1 seek=$((1024 + 1020)) conv=notrunc status=none
e2fsck -fn "$img" 2>&1 | grep -q "Superblock invalid, trying backup blocks" ||
	fail "superblock checksum: e2fsck keeps the primary"
before=$(sha_of "$img")
run_e2trim -v "$img"
assert_rc 16 "superblock checksum"
assert_grep "Superblock checksum does not match" "$ERR" "superblock checksum"
assert_eq "$(sha_of "$img")" "$before" "superblock checksum: image changed"
note "exit 16: superblock checksum (e2fsck takes the backup)"
# More unused inodes than free ones: e2fsck sets itable_unused to 0 and
# reads the whole group (PR_0_GDT_ITABLE_UNUSED).
mkfs "$img" 64M "${ext4k[@]}"
printf 'set_bg 1 itable_unused %s\nset_bg 1 checksum calc\n' \
	"$(( $(dumpe2fs -h "$img" 2>/dev/null | awk '/^Inodes per group:/ {print $4}') + 1 ))" |
	dfs_write "$img"
e2fsck -fn "$img" 2>&1 | grep -q "has invalid unused inodes count" ||
	fail "itable_unused: e2fsck does not object"
before=$(sha_of "$img")
run_e2trim -v "$img"
assert_rc 22 "itable_unused above the free inodes"
assert_grep "unused inodes count" "$ERR" "itable_unused"
assert_eq "$(sha_of "$img")" "$before" "itable_unused: image changed"
note "exit 22: itable_unused above the free inodes (e2fsck reads the group)"

# --- 4. what must pass: a filesystem grown by resize2fs ---------------------
mkfs "$img" 64M "${ext4k[@]}"
printf 'write %s f\n' "$D" | dfs_write "$img"
truncate -s 600M "$img"
resize2fs "$img" >/dev/null 2>&1 || fail "resize2fs"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "resize2fs left it unclean"
run_e2trim -v "$img"
assert_rc 0 "a filesystem grown by resize2fs"
dfs_read "$img" "dump f $T/back"
cmp -s "$T/back" "$D" || fail "f changed on the grown filesystem"
note "exit 0: grown by resize2fs ($(dumpe2fs -h "$img" 2>/dev/null |
	awk '/^Block count:/ {print $3}') blocks)"
