#!/bin/bash
# No clean filesystem is refused (issue 23, "what must not regress").
# For every feature set mke2fs makes (ext2, ext3, ext4; 1k, 2k, 4k and
# 64k blocks; inline_data, orphan_file, quota with project, bigalloc,
# meta_bg, sparse_super2, no flex_bg, 128-byte inodes, ea_inode, casefold,
# encrypt, large_dir, mmp, no journal, no 64bit, an external journal)
# a small filesystem gets files through debugfs: a file, a directory with a
# file in it, a short (fast) and a long (slow) symlink, a small file
# (inline data where the feature is on) and an extended attribute; some
# are then changed by tune2fs (-I 512 on ext3 and ext4 without flex_bg,
# the journal removed and added back, metadata_csum, orphan_file) or
# resize2fs (grown, shrunk).  Then:
#  - e2fsck -fn finds it clean (the oracle that it is clean);
#  - e2trim trims it, exit 0;
#  - e2fsck -fn still finds it clean;
#  - every file reads back (debugfs dump) with its sha256 from before,
#    every symlink with its target, the xattr with its value.
# shellcheck disable=SC2016 # TUNE='... "$img"': expanded by sweep's eval
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
mmp_no_wait	# the real trims of the MMP layout: not about another node

img=$T/a.img
head -c 300000 /dev/urandom >"$T/big"
head -c 90 /dev/urandom >"$T/small"
head -c 450 /dev/urandom | base64 -w0 >"$T/xattr"
# an EA inode's (debugfs ea_set -f reads 1 KiB at most: given inline)
head -c 4500 /dev/urandom | base64 -w0 >"$T/xhuge"
short=/short/t
long=/$(printf 'long%.0s' $(seq 1 60))

files="big d/in small"

# populate IMG: the same files and links on every filesystem
populate() {
	{
		printf 'write %s big\n' "$T/big"
		printf 'mkdir d\nwrite %s d/in\n' "$T/big"
		printf 'write %s small\n' "$T/small"
		printf 'symlink ss %s\nsymlink sl %s\n' "$short" "$long"
		printf 'ea_set -f %s big user.x\n' "$T/xattr"
		[ -z "${XHUGE:-}" ] ||
			printf 'ea_set small user.huge %s\n' "$(cat "$T/xhuge")"
	} | debugfs -w -f - "$1" >"$T/dbg.log" 2>&1 || fail "debugfs on $1"
}

# intact IMG WHAT: every file and link as it was written
intact() {
	local f src
	for f in $files; do
		src=$T/big; [ "$f" = small ] && src=$T/small
		rm -f "$T/back"
		dfs_read "$1" "dump $f $T/back"
		[ "$(sha_of "$T/back")" = "$(sha_of "$src")" ] || fail "$2: $f changed"
	done
	dfs_read "$1" "stat ss" | grep -qF "Fast link dest: \"$short\"" ||
		fail "$2: the short link changed"
	rm -f "$T/back"
	dfs_read "$1" "dump sl $T/back"
	[ "$(cat "$T/back")" = "$long" ] || fail "$2: the long link changed"
	dfs_read "$1" "ea_get -f $T/back big user.x"
	cmp -s "$T/back" "$T/xattr" || fail "$2: the xattr changed"
	[ -z "${XHUGE:-}" ] && return
	rm -f "$T/back"
	dfs_read "$1" "ea_get -f $T/back small user.huge"
	cmp -s "$T/back" "$T/xhuge" || fail "$2: the xattr in an EA inode changed"
}

clean() {	# IMG WHAT [e2fsck options]
	local img=$1 what=$2; shift 2
	e2fsck -fn "$@" "$img" >"$T/fsck.log" 2>&1 ||
		{ cat "$T/fsck.log" >&2; fail "$what: e2fsck -fn is not clean"; }
}

# sweep SIZE WHAT MKE2FS-OPTIONS...: make, fill, trim, check
sweep() {
	local size=$1 what=$2; shift 2
	mkfs "$img" "$size" "$@" 2>/dev/null
	populate "$img"
	# debugfs leaves the quota files alone, and an EA inode out of its
	# owner's i_blocks: e2fsck -fy brings them in line
	[ -z "${FSCK_FIRST:-}" ] || e2fsck -fy "$img" >/dev/null 2>&1
	# TUNE: a change made after the files (tune2fs, resize2fs), on $img
	# (before the free space is filled: tune2fs -I on a filled ext4
	# without flex_bg leaves a journal e2fsck calls corrupt)
	if [ -n "${TUNE:-}" ]; then
		eval "$TUNE" >"$T/tune.log" 2>&1 || { cat "$T/tune.log" >&2; fail "$what: $TUNE"; }
	fi
	fill_free "$img"	# so that a trim has bytes to give back
	clean "$img" "$what (before)"
	run_e2trim -v "$img"
	assert_rc 0 "$what"
	assert_grep "trimmed" "$OUT" "$what"
	clean "$img" "$what (after)"
	intact "$img" "$what"
	note "$what: exit 0, $(sed -n 's/.*: \(.*\) trimmed$/\1/p' "$OUT" | head -1) trimmed, clean, files intact"
}

sweep 32M "ext2" -t ext2
sweep 32M "ext3" -t ext3
sweep 32M "ext4" -t ext4
sweep 32M "ext4, 1k blocks" -t ext4 -b 1024
sweep 32M "ext4, 2k blocks" -t ext4 -b 2048
sweep 128M "ext4, 64k blocks" -t ext4 -b 65536
sweep 32M "ext2, 1k blocks" -t ext2 -b 1024
sweep 32M "inline_data" -t ext4 -I 256 -O inline_data
debugfs -R "stat small" "$img" 2>/dev/null | grep -q "Flags: 0x10000000" ||
	fail "inline_data: the small file is not inline"
sweep 32M "orphan_file" -t ext4 -O orphan_file
FSCK_FIRST=1 sweep 32M "quota with project" -t ext4 -I 256 -O quota,project
sweep 64M "bigalloc" -t ext4 -O bigalloc -C 16384
sweep 32M "bigalloc, 1k blocks" -t ext4 -b 1024 -O bigalloc -C 16384
# Two groups: with 1 KiB blocks bigalloc puts the first data block at 0,
# and the resize inode names each backup of the reserved GDT blocks one
# block further on than the layout reserves it.  At 157 MiB the 78
# reserved GDT blocks of group 1 end on a cluster's last block, so the
# last backup the resize inode names opens a cluster the bitmap calls
# free; e2fsck -fn is clean (it marks only the resize inode's DIND block).
sweep 157M "bigalloc, 1k blocks, two groups" -t ext4 -b 1024 -O bigalloc -C 16384
dumpe2fs -h "$img" 2>/dev/null | grep -q "^Reserved GDT blocks: *78$" ||
	fail "bigalloc, 1k blocks, two groups: not 78 reserved GDT blocks"
# ...while the resize inode's DIND block, which e2fsck marks, stays its own
dind=$(dfs_read "$img" "stat <7>" | sed -n 's/^(DIND):\([0-9]*\).*/\1/p')
[ -n "$dind" ] || fail "the resize inode has no DIND block"
debugfs -w -R "freeb $dind" "$img" >/dev/null 2>&1
run_e2trim -n "$img"
assert_rc 19 "resize inode's DIND block $dind marked free"
assert_grep "indirect block of inode 7 (resize inode)" "$ERR" "DIND block marked free"
debugfs -w -R "setb $dind" "$img" >/dev/null 2>&1
clean "$img" "bigalloc, 1k blocks, two groups (DIND marked in use again)"
# Two descriptor blocks with 1 KiB blocks and bigalloc: libext2fs reads
# them from blocks 2 and 3, yet ext2fs_descriptor_block_loc2() puts the
# second at 2 too; the look for a writer that came and went must read
# what libext2fs read (before: every real run stopped, 26)
sweep 40M "bigalloc, 1k blocks, two descriptor blocks" -t ext4 -b 1024 -O bigalloc -C 2048 -g 1024
dumpe2fs "$img" 2>/dev/null | grep -q "Group descriptors at 2-3$" ||
	fail "bigalloc, 1k blocks, two descriptor blocks: not at 2-3"
sweep 32M "meta_bg" -t ext4 -b 1024 -O meta_bg,^resize_inode
sweep 32M "sparse_super2" -t ext4 -b 1024 -O sparse_super2
sweep 32M "no flex_bg" -t ext4 -b 1024 -O ^flex_bg
sweep 32M "128-byte inodes" -t ext4 -I 128
FSCK_FIRST=1 XHUGE=1 sweep 32M "ea_inode" -t ext4 -O ea_inode
dfs_read "$img" "stat small" | grep -q "File ACL: 0" ||
	fail "ea_inode: user.huge is in an xattr block, not an EA inode"
sweep 32M "casefold" -t ext4 -O casefold
sweep 32M "encrypt" -t ext4 -O encrypt
sweep 32M "large_dir" -t ext4 -O large_dir
sweep 32M "mmp" -t ext4 -O mmp
sweep 32M "no journal" -t ext4 -O ^has_journal
sweep 32M "no 64bit" -t ext4 -O ^64bit
sweep 32M "metadata_csum off, uninit_bg" -t ext4 -O ^metadata_csum,uninit_bg

# (TUNE is eval'ed in sweep, where $img is set)
# tune2fs and resize2fs after the files: still clean, never refused.
# tune2fs -I moves the journal and leaves its backup in s_jnl_blocks as it
# was; e2fsck uses inode 8 and refreshes the backup (e2trim refused, 14).
TUNE='tune2fs -I 512 "$img"' sweep 32M "ext3, then tune2fs -I 512" -t ext3
# (1 KiB blocks: with 4 KiB ones, tune2fs 1.47.0 -I 512 itself leaves a
# journal that e2fsck -fn calls corrupt)
TUNE='tune2fs -I 512 "$img"' sweep 32M "ext4 ^flex_bg, then tune2fs -I 512" -t ext4 -O ^flex_bg -b 1024
TUNE='tune2fs -O ^has_journal "$img" && tune2fs -O has_journal "$img"' \
	sweep 32M "ext4, then without a journal and with one again" -t ext4
TUNE='e2fsck -fy "$img" && tune2fs -O metadata_csum "$img"' \
	sweep 32M "ext4 ^metadata_csum, then tune2fs -O metadata_csum" -t ext4 -O ^metadata_csum
TUNE='tune2fs -O orphan_file "$img"' sweep 32M "ext4, then tune2fs -O orphan_file" -t ext4
TUNE='resize2fs "$img" 48M' sweep 32M "ext4, then resize2fs 32M -> 48M" -t ext4
TUNE='e2fsck -fy "$img" && resize2fs "$img" 24M' sweep 32M "ext4, then resize2fs 32M -> 24M" -t ext4
TUNE='e2fsck -fy "$img" && resize2fs "$img" 24M' sweep 32M "ext3, then resize2fs 32M -> 24M" -t ext3

# an external journal, found by its UUID on a loop device
if [ "$(id -u)" != 0 ] || ! losetup -f >/dev/null 2>&1; then
	[ "${CI:-}" != true ] || fail "external journal: needs root and a loop device"
	note "external journal: skipped (needs root and a loop device)"
	exit 0
fi
jimg=$T/journal.img
rm -f "$jimg"; truncate -s 8M "$jimg"
mke2fs -q -F -O journal_dev -b 4096 "$jimg" >/dev/null || fail "mke2fs journal_dev"
jdev=$(losetup -f --show "$jimg") || fail "losetup"
LOOPS+=("$jdev")
sweep 32M "external journal" -t ext4 -b 4096 -J device="$jdev"
dumpe2fs -h "$img" 2>/dev/null | grep -q "^Journal UUID:" ||
	fail "external journal: the filesystem names none"
