#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# images/mkimages.sh - regenerate e2trim's fixture images, reproducibly,
# without root and without mounting anything.
#
#   images/mkimages.sh               rebuild every images/<name>.img.xz
#   images/mkimages.sh NAME...       rebuild only these
#   images/mkimages.sh --check       rebuild all in a scratch directory and
#                                    compare with images/SHA256SUMS
#   images/mkimages.sh --list        print the fixture names
#
# Reproducible: a fixed clock (E2FSPROGS_FAKE_TIME, SOURCE_DATE_EPOCH),
# a fixed mke2fs.conf (tests/mke2fs.conf), a fixed UUID and hash seed,
# lazy_itable_init=0 (otherwise mke2fs asks the running kernel), random
# numbers from fixed seeds (images/fixtool.py) and the MMP block, where
# libext2fs writes the host name and the real clock, rewritten with fixed
# values.  images/SHA256SUMS holds the digests of the decompressed images
# (xz -9 -T1 output is stable too, but only the images are promised).
# Same e2fsprogs, same bytes; the version used is in images/README.md.
#
# Needs: mke2fs, debugfs, dumpe2fs, e2fsck (e2fsprogs), mkswap
# (util-linux), python3, xz.  See images/README.md for what each is for.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$here/common.sh"
FIXTOOL="python3 $here/fixtool.py"
OUT=$here

# age IMG SEED FRACTION [extents]: every free block written with 0x5a,
# then files of many sizes written until about FRACTION of the free
# space is used, about half removed, holes punched into some others, and
# two files removed that run from one block group into the next.
age() {
	local img=$1 seed=$2 frac=$3 ext=${4:-}
	mkdir -p "$W/blobs"
	$FIXTOOL fill-free "$img" 0x5a
	$FIXTOOL age-script "$img" "$seed" "$frac" "$W/blobs" ${ext:+"$ext"} >"$W/age.cmds"
	debugfs_script "$img" "$W/age.cmds"
	rm -rf "$W/blobs"
	# and free two files that run across a group edge, if there are any
	$FIXTOOL edge-files "$img" 2 >"$W/edge.cmds"
	[ ! -s "$W/edge.cmds" ] || debugfs_script "$img" "$W/edge.cmds"
}

fsck_clean() {	# a good fixture passes e2fsck -fn untouched
	e2fsck -fn "$1" >"$W/fsck.out" 2>&1 || { cat "$W/fsck.out" >&2; die "$1 is not clean"; }
}
fsck_dirty() {	# a damaged fixture must be something e2fsck complains about
	if e2fsck -fn "$1" >"$W/fsck.out" 2>&1; then die "$1: e2fsck -fn finds nothing wrong"; fi
}

# The MMP block gets the host name and the real time from libext2fs.
mmp_fix() {	# IMG SEQ NODENAME
	$FIXTOOL mmp "$1" "$2" "$3" "$(basename "$1")"
}

# Groups flagged BLOCK_UNINIT in an image.
uninit_groups() {
	dumpe2fs "$1" 2>/dev/null | grep -c '^Group .*BLOCK_UNINIT' || true
}

# ---------------------------------------------------------------------
# Good layouts: aged, clean, e2trim must plan exactly dumpe2fs's free
# extents.  Small groups so a small image has many groups.

fx_ext2-1k() {		# 1 KiB blocks: block 0 is the boot block
	mk "$1" 16M -t ext2 -b 1024 -g 1024
	age "$1" 1 0.7; fsck_clean "$1"
}
fx_ext2-2k() {
	mk "$1" 32M -t ext2 -b 2048 -g 2048
	age "$1" 2 0.7; fsck_clean "$1"
}
fx_ext3() {
	mk "$1" 32M -t ext3 -b 1024 -g 2048
	age "$1" 3 0.7; fsck_clean "$1"
}
fx_ext4() {
	mk "$1" 64M -t ext4 -g 2048
	age "$1" 4 0.7 extents; fsck_clean "$1"
}
fx_ext4-noflex() {
	mk "$1" 32M -t ext4 -O ^flex_bg -b 1024 -g 2048
	age "$1" 5 0.7 extents; fsck_clean "$1"
}
fx_ext4-metabg() {	# 16 descriptors a block: 4 meta groups of 16
	mk "$1" 64M -t ext4 -O meta_bg,^resize_inode -b 1024 -g 1024
	age "$1" 6 0.7 extents; fsck_clean "$1"
}
fx_ext4-bigalloc16k() {	# -g counts clusters: 256 x 16 KiB = 4 MiB groups
	mk "$1" 64M -t ext4 -O bigalloc -C 16384 -b 1024 -g 256
	age "$1" 7 0.7 extents; fsck_clean "$1"
}
fx_ext4-bigalloc64k() {	# 256 x 64 KiB = 16 MiB groups (the least mke2fs takes)
	mk "$1" 128M -t ext4 -O bigalloc -C 65536 -g 256
	age "$1" 8 0.7 extents; fsck_clean "$1"
}
fx_ext4-uninit() {	# lightly used: most groups stay BLOCK_UNINIT
	mk "$1" 64M -t ext4 -g 1024
	age "$1" 9 0.08 extents; fsck_clean "$1"
	[ "$(uninit_groups "$1")" -ge 8 ] || die "$1: too few BLOCK_UNINIT groups left"
}
fx_ext4-uninitbg() {	# the older uninit_bg (crc16 descriptors), no metadata_csum
	mk "$1" 32M -t ext4 -O ^metadata_csum,uninit_bg -b 1024 -g 1024
	age "$1" 10 0.1 extents; fsck_clean "$1"
	[ "$(uninit_groups "$1")" -ge 8 ] || die "$1: too few BLOCK_UNINIT groups left"
}
fx_ext4-sparse2() {	# superblock backups only in group 1 and the last
	mk "$1" 32M -t ext4 -O sparse_super2 -b 1024 -g 1024
	age "$1" 11 0.7 extents; fsck_clean "$1"
}
fx_ext4-mmp() {		# MMP, left clean; interval 1 s keeps debugfs quick
	EOPTS=mmp_update_interval=1 mk "$1" 32M -t ext4 -O mmp -g 1024
	age "$1" 12 0.7 extents
	mmp_fix "$1" 0xFF4D4D50 e2trim-fixture	# EXT4_MMP_SEQ_CLEAN
	fsck_clean "$1"
}
fx_ext4-tail() {	# a 32 MiB filesystem in a 48 MiB file; tail is 0xee
	BLOCKS=32M mk "$1" 48M -t ext4 -g 1024
	age "$1" 13 0.7 extents
	$FIXTOOL fill-range "$1" $((32 << 20)) $((16 << 20)) 0xee
	fsck_clean "$1"
}

# ---------------------------------------------------------------------
# Unsafe states, most from one aged ext4 base (4 KiB blocks, 8 groups).

base() {
	mk "$1" 32M -t ext4 -g 1024
	age "$1" 20 0.7 extents
}

fx_unsafe-journal-recover() { base "$1"; dfs "$1" "feature needs_recovery"; }
fx_unsafe-error-fs() { base "$1"; dfs "$1" "ssv state 3"; }	# VALID|ERROR
fx_unsafe-not-valid() { base "$1"; dfs "$1" "ssv state 0"; }
fx_unsafe-orphan-inode() {	# an unlinked, still allocated inode on the list
	local ino
	base "$1"
	head -c 300000 /dev/zero | tr '\0' '\201' >"$W/orphan"
	dfs "$1" "write $W/orphan orphan"
	ino=$(debugfs -R "stat orphan" "$1" 2>/dev/null | awk '/^Inode:/ {print $2; exit}')
	[ -n "$ino" ] || die "no orphan inode"
	dfs "$1" "unlink orphan" "sif <$ino> links_count 0" \
		"sif <$ino> dtime 0" "ssv last_orphan $ino"
}
fx_unsafe-orphan-file() {	# the newer orphan file, flagged non-empty
	mk "$1" 32M -t ext4 -O orphan_file -g 1024
	age "$1" 21 0.7 extents
	dfs "$1" "feature orphan_present"
}
fx_unsafe-gd-csum() {	# metadata_csum (crc32c) descriptor checksum wrong
	base "$1"
	dfs "$1" "set_bg 2 checksum 0xdead"
	fsck_dirty "$1"
}
fx_unsafe-gd-csum-crc16() {	# uninit_bg (crc16) descriptor checksum wrong
	mk "$1" 16M -t ext4 -O ^metadata_csum,uninit_bg -b 1024 -g 1024
	age "$1" 22 0.7 extents
	dfs "$1" "set_bg 3 checksum 0xdead"
	fsck_dirty "$1"
}
fx_unsafe-gd-uninit-flag() {	# BLOCK_UNINIT set on a used group: hides its data
	base "$1"
	dumpe2fs "$1" 2>/dev/null | grep -q '^Group 1: .*BLOCK_UNINIT' &&
		die "group 1 of the base is not in use"
	$FIXTOOL gd-flags "$1" 1 0x2
	fsck_dirty "$1"
}
fx_unsafe-bitmap-csum() {	# bitmap says the superblock and GDT are free
	base "$1"
	$FIXTOOL bitmap-byte "$1" 0 0 0x00
	fsck_dirty "$1"
}
fx_unsafe-desc-layout() {	# ext2 (no checksums): group 1's bitmap inside group 0
	mk "$1" 16M -t ext2 -b 1024 -g 1024
	age "$1" 23 0.7
	dfs "$1" "set_bg 1 block_bitmap 100"
	fsck_dirty "$1"
}
fx_unsafe-truncated() { base "$1"; truncate -s 20M "$1"; }
fx_unsafe-truncated-meta() { base "$1"; truncate -s 6144 "$1"; }	# inside the GDT
fx_unsafe-mmp-seq() {	# another node's running sequence number
	EOPTS=mmp_update_interval=1 mk "$1" 16M -t ext4 -O mmp -g 1024
	mmp_fix "$1" 0x42 othernode
}
fx_unsafe-mmp-fsck() {	# e2fsck's "I am checking it" sequence number
	EOPTS=mmp_update_interval=1 mk "$1" 16M -t ext4 -O mmp -g 1024
	mmp_fix "$1" 0xE24D4D50 fsckhost	# EXT4_MMP_SEQ_FSCK
}
fx_unsafe-feature-incompat() { base "$1"; dfs "$1" "feature FEATURE_I30"; }
fx_unsafe-feature-rocompat() { base "$1"; dfs "$1" "feature FEATURE_R30"; }
fx_unsafe-journal-dev() { mk "$1" 8M -O journal_dev -b 4096; }	# external journal

# Not ext at all.
fx_notext-zeros() { rm -f "$1"; truncate -s 1M "$1"; }
fx_notext-random() { $FIXTOOL random "$1" 65536 4; }
fx_notext-swap() {
	rm -f "$1"; truncate -s 1M "$1"
	mkswap -q -U "$UUID" -L e2trim-fixture "$1" >/dev/null 2>&1 || die "mkswap failed"
}
fx_notext-xfs() { $FIXTOOL xfs "$1" 1048576; }
fx_notext-tiny() { head -c 1000 /dev/zero | tr '\0' '\132' >"$1"; }

FIXTURES=(
	ext2-1k ext2-2k ext3 ext4 ext4-noflex ext4-metabg ext4-bigalloc16k
	ext4-bigalloc64k ext4-uninit ext4-uninitbg ext4-sparse2 ext4-mmp
	ext4-tail
	unsafe-journal-recover unsafe-error-fs unsafe-not-valid
	unsafe-orphan-inode unsafe-orphan-file unsafe-gd-csum
	unsafe-gd-csum-crc16 unsafe-gd-uninit-flag unsafe-bitmap-csum
	unsafe-desc-layout unsafe-truncated unsafe-truncated-meta
	unsafe-mmp-seq unsafe-mmp-fsck unsafe-feature-incompat
	unsafe-feature-rocompat unsafe-journal-dev
	notext-zeros notext-random notext-swap notext-xfs notext-tiny
)

build() {	# NAME: $W/NAME.img -> $OUT/NAME.img.xz, digest to $W/sums
	local name=$1 img=$W/$1.img
	declare -F "fx_$name" >/dev/null || die "no fixture $name"
	"fx_$name" "$img"
	(cd "$W" && sha256sum "$name.img") >>"$W/sums"
	xz -9 -T1 -c "$img" >"$OUT/$name.img.xz.tmp"
	mv "$OUT/$name.img.xz.tmp" "$OUT/$name.img.xz"
	printf '%-28s %9d -> %6d bytes\n' "$name" "$(stat -c %s "$img")" \
		"$(stat -c %s "$OUT/$name.img.xz")"
	rm -f "$img"
}

check=
case "${1:-}" in
--list) printf '%s\n' "${FIXTURES[@]}"; exit 0 ;;
--check) check=1; shift; OUT=$W/out; mkdir -p "$OUT" ;;
-*) sed -n '3,11s/^# \{0,1\}//p' "$0"; exit 3 ;;
esac
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${FIXTURES[@]}")
: >"$W/sums"
for n in "${names[@]}"; do build "$n"; done

if [ -n "$check" ]; then
	if [ "$(mke2fs -V 2>&1 | head -1)" != "$(head -1 "$here/VERSIONS")" ]; then
		echo "mkimages: images/VERSIONS has $(head -1 "$here/VERSIONS"), this is" \
			"$(mke2fs -V 2>&1 | head -1): the images may differ" >&2
	fi
	bad=0
	while read -r h n; do
		grep -qx "$h  $n" "$here/SHA256SUMS" || { echo "differs: $n" >&2; bad=1; }
	done <"$W/sums"
	[ $bad = 0 ] || die "regenerated images differ from images/SHA256SUMS"
	echo "mkimages: all ${#names[@]} images are byte-identical to images/SHA256SUMS"
	exit 0
fi

# Digests of the decompressed images; those not rebuilt this time stay.
touch "$here/SHA256SUMS"
awk 'NR == FNR { new[$2] = $1; next } !($2 in new) { print }
     END { for (n in new) print new[n] "  " n }' "$W/sums" "$here/SHA256SUMS" |
	sort -k2 >"$W/sums.all"
mv "$W/sums.all" "$here/SHA256SUMS"
# The tools the digests hold for (mkimages.sh --check compares only when
# this e2fsprogs is the same).
{
	mke2fs -V 2>&1 | head -1
	xz --version | head -1
	python3 --version
} >"$here/VERSIONS"
echo "mkimages: $(du -sh "$OUT" | cut -f1) in $OUT"
