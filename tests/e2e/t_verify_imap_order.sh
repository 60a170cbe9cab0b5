#!/bin/bash
# Verification reads the inode bitmaps in the same stream as the inode
# tables (src/verify/verify_imap.c), a group's bitmap just before its
# table; it used to read the whole map first.  Its refusals must stay as
# they were: an inode bitmap whose checksum does not match, in the LAST
# group, is the refusal even when an inode of group 0 cannot be followed
# (the walk meets that inode first, before the bad bitmap is read).  Each
# damage alone is refused with its own words; both together, with the
# bitmap's.  Nothing changes in any of them.  The oracle for "which
# comes first" is e2trim before the change (the map read whole first),
# whose words these are.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

# 16 groups of 1 KiB blocks, flex_bg (the bitmaps end to end), checksums
mkfs "$T/clean.img" 64M -t ext4 -O metadata_csum,flex_bg -N 4096 -g 4096 -b 1024
head -c 3000 /dev/urandom >"$T/f"
dfs_write "$T/clean.img" <<EOF
write $T/f f
EOF
last=$(dumpe2fs -h "$T/clean.img" 2>/dev/null | awk -F: '/^Block count/ { print int(($2 - 1) / 4096) }')
ib=$(dumpe2fs "$T/clean.img" 2>/dev/null |
	awk -v g="Group $last:" 'index($0, g) == 1 { on = 1 } on && /Inode bitmap at/ { print $4; exit }')
[ -n "$ib" ] || fail "no inode bitmap of group $last"

# the last group's bitmap in use (not INODE_UNINIT), one byte of it changed
cp "$T/clean.img" "$T/bm.img"
dfs_write "$T/bm.img" <<EOF
set_bg $last flags 0
set_bg $last itable_unused 0
set_bg $last checksum calc
EOF
printf '\377' | dd of="$T/bm.img" bs=1024 seek="$ib" conv=notrunc 2>/dev/null
# inode 12 (group 0): an extent header that is not one (checksum updated)
cp "$T/clean.img" "$T/ino.img"
echo "sif /f block[0] 0x1234" | dfs_write "$T/ino.img"
cp "$T/bm.img" "$T/both.img"
echo "sif /f block[0] 0x1234" | dfs_write "$T/both.img"

bitmap_words="cannot tell which blocks are in use (Inode bitmap checksum does not match bitmap)"
inode_words="cannot tell which blocks are in use (inode 12: Corrupt extent header)"
check() {	# IMG WORDS NOT_WORDS
	local img=$T/$1.img before
	before=$(sha_of "$img")
	for how in -n ""; do
		run_e2trim $how "$img"
		assert_rc 16 "$1 $how"
		assert_grep "$2" "$ERR" "$1 $how: the refusal's words"
		! grep -qF "$3" "$ERR" || fail "$1 $how: said '$3'"
		assert_eq "$(sha_of "$img")" "$before" "$1 $how: image changed"
	done
}
run_e2trim -n "$T/clean.img"
assert_rc 0 "clean"
check bm "$bitmap_words" "inode 12"
check ino "$inode_words" "Inode bitmap"
check both "$bitmap_words" "inode 12"
echo "PASS"
