#!/bin/bash
# Directory entries are read wherever the kernel keeps them: in an
# inline-data directory's i_block, in its system.data attribute, in the
# leaves of an htree.  The kernel writes each directory; e2trim accepts
# the filesystem.  Then debugfs adds one entry naming the first inode of
# a group flagged INODE_UNINIT (a copy of a file's inode, checksum right):
# e2trim refuses with 23 and names the directory, and e2fsck -fy keeps
# the file it names.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

# case_dir NAME FILES PREFIX FLAG: directory /d with FILES entries named
# PREFIX0, PREFIX1 ... made by the kernel, then an entry to the inode
# (the file "kept": small, its bytes inline in the inode, no blocks)
case_dir() {
	local name=$1 files=$2 prefix=$3 flag=$4 img=$T/$1.img mnt=$T/mnt dev i dir g ino
	mkfs "$img" 32M -t ext4 -O inline_data -g 2048
	mkdir -p "$mnt"
	dev=$(loop_attach "$img")
	mount "$dev" "$mnt" || fail "$name: mount"
	MOUNTS+=("$mnt")
	echo "the file's bytes" >"$mnt/kept"
	mkdir "$mnt/d"
	for ((i = 0; i < files; i++)); do : >"$mnt/d/$prefix$i"; done
	unmount_loop "$mnt" "$dev"

	run_e2trim -n "$img"
	assert_rc 0 "$name: as the kernel left it"
	dir=$(debugfs -R "stat d" "$img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
	debugfs -R "stat d" "$img" 2>/dev/null | grep -q "Flags: $flag" ||
		fail "$name: directory flags are not $flag"
	# the first inode of the first group still flagged INODE_UNINIT
	g=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/^Group \([0-9]*\):.*INODE_UNINIT.*/\1/p' | head -1)
	[ -n "$g" ] || fail "$name: no group left with INODE_UNINIT"
	ino=$((g * 2048 + 1))
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		copy_inode kept <$ino>
		sif <$ino> checksum calc
		ln <$ino> d/zz
	EOF
	debugfs -R "dump kept $T/kept" "$img" >/dev/null 2>&1
	sum=$(sha_of "$img")
	run_e2trim -n "$img"
	assert_rc 23 "$name: an entry names inode $ino"
	assert_grep "directory inode $dir names inode $ino of group $g" "$ERR" "$name: names the directory"
	assert_eq "$(sha_of "$img")" "$sum" "$name: image changed"
	e2fsck -fy "$img" >"$T/fsck" 2>&1
	assert_grep "references inode $ino in group $g where _INODE_UNINIT is set" "$T/fsck" \
		"$name: e2fsck sees the entry"
	debugfs -R "dump d/zz $T/zz" "$img" >/dev/null 2>&1
	cmp -s "$T/kept" "$T/zz" || fail "$name: e2fsck -fy does not keep the file"
	grep -q "^the file's bytes" "$T/zz" || fail "$name: not the file's bytes"
	note "$name: $files entries, exit 23, e2fsck -fy keeps the file"
	rm -f "$img"
}

case_dir inline 2 a 0x10000000		# 4 + 2 * 12 bytes: in i_block
case_dir inline-xattr 6 a 0x10000000	# past 60 bytes: system.data
case_dir htree 400 entry-with-a-long-name- 0x81000	# extents, index

# Not only directory entries: an inode the superblock names (here the
# user quota inode) is read by e2fsck whatever the descriptors say, so it
# too must lie in the used part of its group.  Refused with 23, naming it.
img=$T/quota.img
mkfs "$img" 32M -t ext4 -g 2048
g=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/^Group \([0-9]*\):.*INODE_UNINIT.*/\1/p' | head -1)
[ -n "$g" ] || fail "quota: no group left with INODE_UNINIT"
ino=$((g * 2048 + 1))
debugfs -w -R "ssv usr_quota_inum $ino" "$img" >/dev/null 2>&1 || fail "quota: ssv"
sum=$(sha_of "$img")
run_e2trim -n "$img"
assert_rc 23 "quota: the superblock names inode $ino"
assert_grep "the superblock names inode $ino, in an unused part of group $g" "$ERR" \
	"quota: names the inode and its group"
assert_eq "$(sha_of "$img")" "$sum" "quota: image changed"
exit 0
