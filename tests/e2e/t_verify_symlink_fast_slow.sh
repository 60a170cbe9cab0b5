#!/bin/bash
# Fast or slow, a symlink is what e2fsck decides it is (src/verify/verify_rules.md
# F8, A5).  e2fsck_pass1_check_symlink() decides by size: a target of 60
# bytes or more is read from the block i_block[0] names.  Which blocks the
# link owns, check_blocks() asks ext2fs_inode_has_valid_blocks2(), which
# believes i_blocks == 0.  A block-mapped link whose i_blocks is 0 and
# whose block is marked free (counts kept right) is clean to e2fsck -fn;
# e2fsck -fy keeps it, and reads its target from that free block.  Trim
# the block and the next e2fsck deletes the link.  e2trim must refuse
# (16) and leave every byte of the image as it was.
#
# The other side: an inline-data symlink of 60 bytes or more with an
# xattr block.  ext2fs_inode_has_valid_blocks2() calls it slow (the xattr
# block makes it guess from the size) and e2trim read its text as a block
# map: a refusal (16) that nothing could fix.  e2fsck never reads i_block[]
# of an inline inode as a block map (check_blocks() takes INLINE_DATA_FL
# first); e2trim must trim such a filesystem (exit 0) and keep the link
# and its xattr.  (e2fsck 1.47.0's pass 1 returns early for an inline
# symlink and never counts its xattr block, so pass 5 offers to free it:
# e2trim keeps it, a superset.)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

# target_at IMG BLOCK LEN: the LEN bytes at block BLOCK, read with dd
target_at() {
	local bs
	bs=$(dumpe2fs -h "$1" 2>/dev/null | awk '/^Block size:/ {print $3}')
	dd if="$1" bs="$bs" skip="$2" count=1 status=none | head -c "$3"
}

img=$T/a.img
tgt=/$(head -c 150 /dev/urandom | base64 -w0 | tr -d '/+=' | head -c 299)
len=${#tgt}

# --- a slow symlink whose i_blocks is 0, its block marked free ------------
for fs in "ext3 -b 4096" "ext4 -b 4096 -O ^extent,^64bit" "ext2 -b 1024"; do
	# shellcheck disable=SC2086  # the options are words
	mkfs "$img" 32M -t $fs
	printf 'symlink sl %s\n' "$tgt" | dfs_write "$img"
	blk=$(dfs_read "$img" "blocks sl" | tr -d ' ')
	[ -n "$blk" ] || fail "$fs: the link has no block"
	printf 'sif sl i_blocks 0\nfreeb %s\n' "$blk" | dfs_write "$img"
	recount_free "$img"
	# e2fsck finds nothing to fix: the refusal cannot say "e2fsck -f fixes it"
	e2fsck -fn "$img" >"$T/fsck.log" 2>&1 ||
		{ cat "$T/fsck.log" >&2; fail "$fs: e2fsck -fn objects"; }
	[ "$(target_at "$img" "$blk" "$len")" = "$tgt" ] ||
		fail "$fs: the target is not in block $blk"

	# e2fsck -fy on a copy keeps the link, its target read from block $blk
	cp --sparse=always "$img" "$T/copy.img"
	e2fsck -fy "$T/copy.img" >"$T/fsck.log" 2>&1 || [ $? -lt 4 ] ||
		{ cat "$T/fsck.log" >&2; fail "$fs: e2fsck -fy"; }
	dfs_read "$T/copy.img" "stat sl" | grep -q "Type: symlink" ||
		fail "$fs: e2fsck -fy deleted the link"
	assert_eq "$(dfs_read "$T/copy.img" "stat sl" | sed -n 's/.*  *Size: \([0-9]*\)$/\1/p' | head -1)" \
		"$len" "$fs: the link's size after e2fsck -fy"
	[ "$(target_at "$T/copy.img" "$blk" "$len")" = "$tgt" ] ||
		fail "$fs: e2fsck -fy changed the target"

	before=$(sha_of "$img")
	run_e2trim -n -v "$img"
	assert_rc 16 "$fs: dry run"
	assert_grep "inode 12: symlink too long for i_block\[\] whose i_blocks is 0" "$ERR" "$fs: dry run"
	assert_grep "recreate the link" "$ERR" "$fs: what to do"
	run_e2trim -v "$img"
	assert_rc 16 "$fs: trim"
	assert_eq "$(sha_of "$img")" "$before" "$fs: the image changed"
	note "$fs: slow symlink with i_blocks 0 refused (16), image unchanged"
done

# --- inline-data symlinks of 60 bytes or more with an xattr block ---------
mkfs "$img" 32M -t ext4 -b 4096 -I 256 -O inline_data
head -c 1500 /dev/urandom | base64 -w0 >"$T/val"
long=/$(printf 'l%.0s' $(seq 1 79))
{
	printf 'symlink il %s\n' "$long"
	printf 'ea_set -f %s il user.big\n' "$T/val"
} | dfs_write "$img"
dfs_read "$img" "stat il" | grep -q "Flags: 0x10000000" || fail "il is not inline"
dfs_read "$img" "stat il" | grep -q "File ACL: [1-9]" || fail "il has no xattr block"
e2fsck -fn "$img" 2>&1 | grep -q "Block bitmap differences:  -$(dfs_read "$img" "stat il" |
	sed -n 's/.*File ACL: \([0-9]*\).*/\1/p')\$" ||
	note "e2fsck no longer offers to free the inline link's xattr block"
run_e2trim -v "$img"
assert_rc 0 "inline symlink with an xattr block"
dfs_read "$img" "stat il" | grep -qF "Fast link dest: \"$long\"" ||
	fail "the inline link's target changed"
dfs_read "$img" "ea_get -f $T/back il user.big"
cmp -s "$T/back" "$T/val" || fail "il's xattr block changed"
note "inline symlink of ${#long} bytes with an xattr block trimmed (0), intact"
