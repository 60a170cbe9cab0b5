#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# images/mkverify.sh - fixtures for e2trim's block ownership check
#
#   images/mkverify.sh              rebuild every images/verify/<name>.img.xz
#   images/mkverify.sh NAME...      rebuild only these
#   images/mkverify.sh --check      rebuild all in a scratch directory and
#                                   compare with images/verify/SHA256SUMS
#   images/mkverify.sh --list       print "name exit-code message" per line
#
# Each image is a clean filesystem, made with mke2fs and debugfs -w only,
# then damaged in one way that e2trim must catch before it trims anything:
# a block that something uses is marked free in the block bitmap (exit 19,
# the message names the owner of the first such block), or an inode cannot
# be followed at all (exit 16).  e2fsck -fn finds every one of them.
#
# They live in images/verify/, apart from images/mkimages.sh's fixtures,
# with their own SHA256SUMS (digests of the decompressed images).
# Reproducible as mkimages.sh is: fixed clock, tests/mke2fs.conf, fixed
# UUID and hash seed, lazy_itable_init=0, file contents from a formula.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$here/common.sh"
OUT=$here/verify

# name, the exit code e2trim must give, what its message must say
FIXTURES=(
	"verify-data          19 data of inode 12"
	"verify-extent-tree   19 extent tree of inode 12"
	"verify-indirect      19 indirect block of inode 12"
	"verify-xattr         19 extended attribute block of inode 12"
	"verify-journal       19 data of inode 8 (journal)"
	"verify-block-uninit  19 data of inode 12"
	"verify-itable        19 inode table of group 0"
	"verify-sb-backup     19 superblock, group descriptors or reserved GDT blocks"
	"verify-bigalloc      19 data of inode 12"
	"verify-bad-extent    16 block 2147483647 (data of inode 12) is outside the filesystem"
	"verify-bad-header    16 inode 12: Corrupt extent header"
	"verify-bad-leaf      16 inode 12: Corrupt extent header"
	"verify-inode-csum    16 inode 12: Inode checksum does not match inode"
	"verify-inode-uninit  23 directory inode 2 names inode 2049 of group 1, which is flagged INODE_UNINIT"
	"verify-itable-unused 23 directory inode 2 names inode 13 of group 0, whose inodes from 13 on are unused"
	"verify-inode-bitmap  19 data of inode 12"
	"verify-count-blocks  22 group 0: free blocks count 2749, block bitmap has 2741"
	"verify-count-inodes  22 group 0: free inodes count 4083, inode bitmap has 4084"
	"verify-count-dirs    22 group 0: directories count 3, inode table has 2"
	"verify-count-unused  22 group 0: unused inodes count 4085, more than its 4084 free inodes"
)

# q IMG REQUEST: one read-only debugfs request, its output
q() { debugfs -R "$2" "$1" 2>/dev/null; }

# blob FILE BLOCKS [BLOCKSIZE]: a file of whole blocks, bytes from a formula
blob() {
	python3 -c 'import sys
n = int(sys.argv[1]) * int(sys.argv[2])
sys.stdout.buffer.write(bytes((i * 7 + i // 4096) & 255 for i in range(n)))' \
		"$2" "${3:-4096}" >"$1"
}

# first_number PATTERN: the number right after PATTERN on stdin
first_number() { sed -n "s/.*$1\([0-9][0-9]*\).*/\1/p" | head -1; }

fsck_clean() {
	e2fsck -fn "$1" >"$W/fsck.out" 2>&1 || { cat "$W/fsck.out" >&2; die "$1 is not clean before the damage"; }
}
fsck_dirty() {
	if e2fsck -fn "$1" >"$W/fsck.out" 2>&1; then die "$1: e2fsck -fn finds nothing wrong"; fi
}

# A file's data block, marked free.
make_verify-data() {
	mk "$1" 16M -t ext4
	blob "$W/f" 64
	dfs "$1" "write $W/f data"
	fsck_clean "$1"
	dfs "$1" "freeb $(q "$1" "bmap data 10")"
}

# The leaf block of an extent tree of depth 1: a file of 160 blocks with
# every other one of its first 80 punched out has 41 extents, more than
# the four that fit in the inode.
make_verify-extent-tree() {
	local cmds=() i
	mk "$1" 16M -t ext4
	blob "$W/f" 160
	cmds=("write $W/f frag")
	for ((i = 1; i < 80; i += 2)); do cmds+=("punch frag $i $i"); done
	dfs "$1" "${cmds[@]}"
	fsck_clean "$1"
	dfs "$1" "freeb $(q "$1" "stat frag" | first_number '(ETB0):')"
}

# The indirect block of a block-mapped file on ext2 (1 KiB blocks).
make_verify-indirect() {
	mk "$1" 16M -t ext2 -b 1024
	blob "$W/f" 100 1024
	dfs "$1" "write $W/f ind"
	fsck_clean "$1"
	dfs "$1" "freeb $(q "$1" "stat ind" | first_number '(IND):')"
}

# An extended attribute block: a value too large to fit in the inode.
make_verify-xattr() {
	mk "$1" 16M -t ext4
	blob "$W/f" 1
	head -c 2000 "$W/f" >"$W/value"
	dfs "$1" "write $W/f attr" "ea_set -f $W/value attr user.big"
	fsck_clean "$1"
	dfs "$1" "freeb $(q "$1" "stat attr" | first_number 'File ACL: ')"
}

# A block of ext3's journal (block-mapped, inode 8).
make_verify-journal() {
	mk "$1" 32M -t ext3
	blob "$W/f" 16
	dfs "$1" "write $W/f data"
	fsck_clean "$1"
	dfs "$1" "freeb $(q "$1" "bmap <8> 100")"
}

# BLOCK_UNINIT set on a group that holds file data, with a descriptor
# checksum that matches: its bitmap is not even read, all of it is free.
make_verify-block-uninit() {
	local flags
	mk "$1" 32M -t ext4 -g 2048
	blob "$W/f" 3000
	dfs "$1" "write $W/f big"
	fsck_clean "$1"
	flags=$(dumpe2fs "$1" 2>/dev/null | sed -n 's/^Group 1: .*csum 0x[0-9a-f]* *//p')
	[ -n "$(q "$1" "bmap big 2500")" ] || die "no data in group 1"
	# bg_flags: INODE_UNINIT 1, BLOCK_UNINIT 2, ITABLE_ZEROED 4
	local v=2
	[[ $flags == *INODE_UNINIT* ]] && v=$((v | 1))
	[[ $flags == *ITABLE_ZEROED* ]] && v=$((v | 4))
	dfs "$1" "set_bg 1 flags $v" "set_bg 1 checksum calc"
}

# The first block of group 0's inode table (the root and journal inodes).
make_verify-itable() {
	mk "$1" 16M -t ext4
	fsck_clean "$1"
	dfs "$1" "freeb $(dumpe2fs "$1" 2>/dev/null | first_number 'Inode table at ')"
}

# The backup superblock of group 1, once data has made its bitmap real
# (freeb in a BLOCK_UNINIT group changes nothing on disk).
make_verify-sb-backup() {
	mk "$1" 32M -t ext4 -g 2048
	blob "$W/f" 3000
	dfs "$1" "write $W/f big"
	fsck_clean "$1"
	dfs "$1" "freeb 2048"
}

# On bigalloc the bitmap has a bit per cluster: a cluster of file data.
make_verify-bigalloc() {
	mk "$1" 32M -t ext4 -O bigalloc -C 16384
	blob "$W/f" 64
	dfs "$1" "write $W/f data"
	fsck_clean "$1"
	dfs "$1" "freeb $(q "$1" "bmap data 21")"
}

# An extent that starts far outside the filesystem: i_block[5] holds
# ee_start_lo of the first extent in the inode.
make_verify-bad-extent() {
	mk "$1" 16M -t ext4
	blob "$W/f" 16
	dfs "$1" "write $W/f data"
	fsck_clean "$1"
	dfs "$1" "sif data block[5] 0x7fffffff"
}

# The extent header in the inode overwritten (i_block[0]: magic, entries).
make_verify-bad-header() {
	mk "$1" 16M -t ext4
	blob "$W/f" 16
	dfs "$1" "write $W/f data"
	fsck_clean "$1"
	dfs "$1" "sif data block[0] 0"
}

# The leaf block of an extent tree zeroed on disk.
make_verify-bad-leaf() {
	make_verify-extent-tree "$1"
	local leaf
	leaf=$(q "$1" "stat frag" | first_number '(ETB0):')
	# undo the freeb: only the zeroed leaf is wrong here
	dfs "$1" "setb $leaf"
	fsck_clean "$1"
	dd if=/dev/zero of="$1" bs=4096 seek="$leaf" count=1 conv=notrunc status=none
}

# An in-use inode whose checksum does not match.
make_verify-inode-csum() {
	mk "$1" 16M -t ext4
	blob "$W/f" 16
	dfs "$1" "write $W/f data"
	fsck_clean "$1"
	dfs "$1" "sif data checksum 0x1234"
}

# group_count IMG GROUP WHAT: dumpe2fs's count of WHAT ("free blocks",
# "free inodes", "directories", "unused inodes") for group GROUP
group_count() {
	dumpe2fs "$1" 2>/dev/null | awk -v g="Group $2:" -v w="$3" '
		index($0, g) == 1 { on = 1; next }
		on { n = split($0, f, ", "); for (i = 1; i <= n; i++) {
			sub(/^ */, "", f[i]); k = f[i]; sub(/^[0-9]* /, "", k)
			if (k == w) { print f[i] + 0; exit } } }'
}

# kept_file IMG: a 64-block file "kept" (inode 12 on a fresh filesystem);
# prints its first block (the file is one extent: debugfs -w writes
# into the first free blocks)
kept_file() {
	blob "$W/f" 64
	dfs "$1" "write $W/f kept"
	fsck_clean "$1"
	q "$1" "bmap kept 0"
}

# free_kept_blocks IMG FIRST: the 64 blocks of "kept" marked free in the
# bitmap, group 0's free blocks count raised to match, checksums right:
# the block bitmap agrees with everything but the inode that uses them
free_kept_blocks() {
	local nfree
	nfree=$(group_count "$1" 0 "free blocks")
	dfs "$1" "freeb $2 64" "set_bg 0 free_blocks_count $((nfree + 64))" \
		"set_bg 0 checksum calc"
}

# A file whose inode sits in a group flagged INODE_UNINIT, its blocks
# free in the bitmap, every count and checksum consistent: the inode scan
# skips the group, but e2fsck's pass 2 finds the entry, clears the flag,
# starts again and keeps the file.  The inode is copied from 12 to 2049
# (group 1's first; its checksum recomputed), 12 cleared and freed.
make_verify-inode-uninit() {
	local first nfree
	mk "$1" 32M -t ext4 -g 2048
	first=$(kept_file "$1")
	nfree=$(group_count "$1" 0 "free inodes")
	dfs "$1" "copy_inode <12> <2049>" "sif <2049> checksum calc" \
		"unlink kept" "ln <2049> kept" "clri <12>" "freei <12>" \
		"set_bg 0 free_inodes_count $((nfree + 1))" "set_bg 0 checksum calc"
	free_kept_blocks "$1" "$first"
}

# The same with a group's unused inode count one too large: the file's
# inode (13, the last in use) is in the unused tail, free in the inode
# bitmap, its blocks free too, group 0's counts raised to match.
make_verify-itable-unused() {
	local first nfree unused
	mk "$1" 16M -t ext4
	blob "$W/g" 1
	dfs "$1" "write $W/g other"
	first=$(kept_file "$1")
	[ "$(q "$1" "stat kept" | first_number 'Inode: ')" = 13 ] || die "kept is not inode 13"
	nfree=$(group_count "$1" 0 "free inodes")
	unused=$(group_count "$1" 0 "unused inodes")
	dfs "$1" "freei <13>" "set_bg 0 free_inodes_count $((nfree + 1))" \
		"set_bg 0 itable_unused $((unused + 1))" "set_bg 0 checksum calc"
	free_kept_blocks "$1" "$first"
}

# The inode bitmap lies: inode 12 (links count 1, named by an entry) is
# free in it, and its blocks in the block bitmap; the counts agree.
# e2fsck's pass 1 reads every inode of the used area and keeps it.
make_verify-inode-bitmap() {
	local first nfree
	mk "$1" 16M -t ext4
	first=$(kept_file "$1")
	blob "$W/g" 1
	dfs "$1" "write $W/g other"
	nfree=$(group_count "$1" 0 "free inodes")
	dfs "$1" "freei <12>" "set_bg 0 free_inodes_count $((nfree + 1))" \
		"set_bg 0 checksum calc"
	free_kept_blocks "$1" "$first"
}

# A group's summary count that is not what its bitmaps say (set_bg
# recomputes nothing but the checksum): free blocks, free inodes,
# directories, and an unused inode count above the free inode count.
make_count() {
	local img=$1 field=$2 what=$3 delta=$4 v
	mk "$img" 16M -t ext4
	kept_file "$img" >/dev/null
	v=$(group_count "$img" 0 "$what")
	dfs "$img" "set_bg 0 $field $((v + delta))" "set_bg 0 checksum calc"
}
make_verify-count-blocks() { make_count "$1" free_blocks_count "free blocks" 8; }
make_verify-count-inodes() { make_count "$1" free_inodes_count "free inodes" -1; }
make_verify-count-dirs() { make_count "$1" used_dirs_count directories 1; }
# The unused count covers inode 12, named by no entry (e2trim reads it
# all the same: the inode bitmap marks it in use); e2fsck sets the count
# to 0, reads the whole table and puts the file in lost+found.
make_verify-count-unused() {
	make_count "$1" itable_unused "unused inodes" 1
	dfs "$1" "unlink kept"
}

names() { printf '%s\n' "${FIXTURES[@]}" | awk '{print $1}'; }

# build DIR NAME: DIR/NAME.img, damaged, and what e2fsck says of it
build() {
	local dir=$1 name=$2
	"make_$name" "$dir/$name.img"
	fsck_dirty "$dir/$name.img"
}

case "${1:-}" in
--list)
	printf '%s\n' "${FIXTURES[@]}" | sed 's/  */ /'
	exit 0 ;;
--check)
	mkdir -p "$W/check"
	bad=0
	for n in $(names); do
		build "$W/check" "$n"
		want=$(awk -v f="$n.img" '$2 == f {print $1}' "$OUT/SHA256SUMS")
		got=$(sha256sum "$W/check/$n.img" | cut -d' ' -f1)
		if [ "$got" = "$want" ]; then echo "$n: same"; else echo "$n: DIFFERS"; bad=1; fi
		rm -f "$W/check/$n.img"
	done
	exit $bad ;;
esac

mkdir -p "$OUT"
todo=("$@")
[ ${#todo[@]} -gt 0 ] || mapfile -t todo < <(names)
for n in "${todo[@]}"; do
	names | grep -qx -- "$n" || die "unknown fixture $n"
	build "$W" "$n"
	xz -9 -T1 -c "$W/$n.img" >"$OUT/$n.img.xz"
	sum=$(cd "$W" && sha256sum "$n.img")
	touch "$OUT/SHA256SUMS"
	{ grep -v "  $n.img\$" "$OUT/SHA256SUMS" || true; echo "$sum"; } |
		sort -k2 >"$W/sums" && mv "$W/sums" "$OUT/SHA256SUMS"
	echo "$n -> images/verify/$n.img.xz ($(stat -c %s "$OUT/$n.img.xz") bytes)"
	rm -f "$W/$n.img"
done
