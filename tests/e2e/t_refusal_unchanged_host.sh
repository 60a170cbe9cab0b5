#!/bin/bash
# A dry run and a refusal change nothing of the image (issue 33 point 6,
# the hosts' part): its bytes (sha256), its allocated blocks and its
# mtime, for an image file, a loop device over one and a qcow2, on an
# ordinary filesystem and on ramfs.  ramfs keeps no holes on record, and
# reading a hole there (or the kernel's readahead around a read)
# allocates it for good: checking an ext2 image read its uninitialized
# inode tables and grew it by 4 MiB, an ext4 one by its reserved GDT
# blocks.  Each image is fresh from mke2fs on a sparse file, so its holes
# are exactly what a read would fill.  The runs: -n (and -n --zero-fill
# on ramfs, where a plain -n is refused with 2), a refusal at the gates
# (13: the superblock says not clean), and --zero-fill on a filesystem
# whose free space is all holes (nothing to write).
# Not here: a loop device over a file on ramfs (the loop driver reads
# the backing file through ramfs, holes and all).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
command -v qemu-img >/dev/null || skip "qemu-img not installed (make deps installs it)"

# after writeback (sync): a file just written has its extent blocks to come
state() { sync "$1"; echo "$(sha_of "$1") $(stat -c "%b %s %Y.%y" "$1")"; }

# unchanged WHAT FILE CODE ARGS...: e2trim ARGS exits CODE, FILE unchanged
unchanged() {
	local what=$1 file=$2 code=$3 before
	shift 3
	before=$(state "$file")
	run_e2trim "$@"
	assert_rc "$code" "$what"
	assert_eq "$(state "$file")" "$before" "$what: bytes, blocks, mtime of $file"
}

mkdir -p "$T/ram" "$T/disk"
mount -t ramfs ramfs "$T/ram" || fail "mount ramfs"
MOUNTS+=("$T/ram")
n=0
for fs in ext2 ext4; do
	mkfs "$T/$fs.img" 64M -t "$fs"
	cp --sparse=always "$T/$fs.img" "$T/$fs.dirty.img"
	dfs_write "$T/$fs.dirty.img" <<<"ssv state 0"
	for host in ram disk; do
		d=$T/$host
		cp --sparse=always "$T/$fs.img" "$d/$fs.img"
		cp --sparse=always "$T/$fs.dirty.img" "$d/$fs.dirty.img"
		qemu-img convert -O qcow2 "$T/$fs.img" "$d/$fs.qcow2" || fail "qemu-img convert"
		qemu-img convert -O qcow2 "$T/$fs.dirty.img" "$d/$fs.dirty.qcow2" || fail "qemu-img convert"
		if [ "$host" = ram ]; then
			unchanged "$fs on ramfs: -n" "$d/$fs.img" 2 -n "$d/$fs.img"
			unchanged "$fs on ramfs: -n --zero-fill" "$d/$fs.img" 0 -n --zero-fill "$d/$fs.img"
			unchanged "$fs on ramfs: --zero-fill, free space all holes" "$d/$fs.img" 0 --zero-fill "$d/$fs.img"
			unchanged "$fs on ramfs: not clean, --zero-fill" "$d/$fs.dirty.img" 13 --zero-fill "$d/$fs.dirty.img"
		else
			unchanged "$fs: -n" "$d/$fs.img" 0 -n "$d/$fs.img"
			unchanged "$fs: not clean" "$d/$fs.dirty.img" 13 "$d/$fs.dirty.img"
			dev=$(loop_attach "$d/$fs.img")
			unchanged "$fs, loop device: -n" "$d/$fs.img" 0 -n "$dev"
			losetup -d "$dev"
			dev=$(loop_attach "$d/$fs.dirty.img")
			unchanged "$fs, loop device: not clean" "$d/$fs.dirty.img" 13 "$dev"
			losetup -d "$dev"
		fi
		unchanged "$fs.qcow2 on $host: -n" "$d/$fs.qcow2" 0 -n "$d/$fs.qcow2"
		unchanged "$fs.qcow2 on $host: not clean" "$d/$fs.dirty.qcow2" 13 "$d/$fs.dirty.qcow2"
		n=$((n + 1))
	done
done
note "$n image sets (ext2, ext4 x ramfs, disk): -n, the refusals and an empty --zero-fill left bytes, blocks and mtimes as they were (file, loop device, qcow2)"
exit 0
