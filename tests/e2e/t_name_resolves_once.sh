#!/bin/bash
# A name resolves once (issue 41.3).  e2trim opens the target's name, and
# every later open (libext2fs, its MMP reads, ramfs_io.c, qemu-nbd) must
# reach the same object: a symlink re-pointed from image A to image B in
# between must not give a plan made from one carried out on the other.
# Held at pause points by the test hooks (FIFO handshakes, no timing):
# "opened" (between e2trim's own open and libext2fs's or qemu-nbd's) and
# verifying@start (after them, before the writable qemu-nbd of a VM
# image) and fsck@start (--fsck: e2fsck running on the name, the trim's
# open after it).  Oracles: B's bytes (sha256 of the whole image) unchanged; A's
# files (debugfs dump) intact, e2fsck -fn clean; a VM image's server
# re-opened on another file refused with 26.  Cases: an image file, a
# loop device, --fsck, --zero-fill on ramfs, a qcow2 at both points.  Needs root.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
command -v qemu-img >/dev/null || skip "qemu-img not installed"

head -c 3M /dev/urandom >"$T/keep.src"
want=$(sha256sum <"$T/keep.src")

# two_images DIR: DIR/a.img and DIR/b.img, aged apart, a file /keep in A
two_images() {
	mkfs "$1/a.img" 64M -t ext4
	age "$1/a.img" 11
	echo "write $T/keep.src keep" | dfs_write "$1/a.img"
	mkfs "$1/b.img" 64M -t ext4
	age "$1/b.img" 12
}

# kept IMG WHAT: A's file intact, A clean
kept() {
	e2fsck -fn "$1" >/dev/null 2>&1 || fail "e2fsck -fn of A ($2)"
	rm -f "$T/keep.out"
	debugfs -R "dump /keep $T/keep.out" "$1" >/dev/null 2>&1 || fail "debugfs dump ($2)"
	assert_eq "$(sha256sum <"$T/keep.out")" "$want" "A's file ($2)"
}

# -- an image file, re-pointed before libext2fs opens it
two_images "$T"
ln -s a.img "$T/link.img"
b=$(sha256sum <"$T/b.img")
alloc=$(alloc_bytes "$T/a.img")
PAUSE_STAGE=opened pause_e2trim -v "$T/link.img"
ln -sfn b.img "$T/link.img"
resume_e2trim
assert_rc 0 "image re-pointed after e2trim's open: A, the object opened, trimmed"
assert_eq "$(sha256sum <"$T/b.img")" "$b" "B's bytes (image file)"
[ "$(alloc_bytes "$T/a.img")" -lt "$alloc" ] || fail "A was not trimmed"
kept "$T/a.img" "image file"
note "image file: re-pointed after the open, A trimmed by its own plan, B unchanged"

# -- --fsck: e2fsck checks the name, the trim opens it after; re-pointed
# while e2fsck runs, the trim would go to a file e2fsck never checked
two_images "$T"
ln -sfn a.img "$T/link.img"
a=$(sha256sum <"$T/a.img")
b=$(sha256sum <"$T/b.img")
PAUSE_STAGE=fsck@start pause_e2trim --fsck -v "$T/link.img"
ln -sfn b.img "$T/link.img"
resume_e2trim
assert_rc 26 "--fsck, re-pointed while e2fsck ran"
assert_grep "another file or device after e2fsck checked it" "$ERR" "26's message (--fsck)"
assert_eq "$(sha256sum <"$T/b.img")" "$b" "B's bytes (--fsck)"
assert_eq "$(sha256sum <"$T/a.img")" "$a" "A's bytes (--fsck: checked, clean, not trimmed)"
note "--fsck: re-pointed while e2fsck ran: 26, both images unchanged"

# -- a loop device, re-pointed to another loop device
two_images "$T"
la=$(loop_attach "$T/a.img")
lb=$(loop_attach "$T/b.img")
ln -sfn "$la" "$T/link.dev"
b=$(sha256sum <"$lb")
PAUSE_STAGE=opened pause_e2trim -v "$T/link.dev"
ln -sfn "$lb" "$T/link.dev"
resume_e2trim
assert_rc 0 "loop device re-pointed after e2trim's open"
assert_eq "$(sha256sum <"$lb")" "$b" "B's bytes (loop device)"
losetup -d "$la" "$lb"
LOOPS=()
kept "$T/a.img" "loop device"
note "loop device: re-pointed after the open, A trimmed, B unchanged"

# -- --zero-fill on ramfs: libext2fs reads through ramfs_io.c
mkdir -p "$T/ram"
mount -t ramfs ramfs "$T/ram" || fail "mount ramfs"
MOUNTS+=("$T/ram")
two_images "$T"
cp --sparse=always "$T/a.img" "$T/b.img" "$T/ram/"
ln -s a.img "$T/ram/link.img"
b=$(sha256sum <"$T/ram/b.img")
PAUSE_STAGE=opened pause_e2trim -v --zero-fill "$T/ram/link.img"
ln -sfn b.img "$T/ram/link.img"
resume_e2trim
assert_rc 0 "--zero-fill on ramfs, re-pointed after e2trim's open"
assert_eq "$(sha256sum <"$T/ram/b.img")" "$b" "B's bytes (ramfs)"
kept "$T/ram/a.img" "ramfs --zero-fill"
note "ramfs --zero-fill: re-pointed after the open, A zero-filled, B unchanged"

# -- qcow2: qemu-nbd opens the name itself, so it is checked to hold the
# image e2trim opened.  B is A's filesystem with a file more, its
# superblock made A's again: only the descriptors and bitmaps tell them
# apart (the superblock compared across qemu-nbd's restart does not).
two_images "$T"
cp "$T/a.img" "$T/b.img"
head -c 8M /dev/urandom >"$T/late.src"
echo "write $T/late.src late" | dfs_write "$T/b.img"
dd if="$T/a.img" of="$T/b.img" bs=1024 skip=1 seek=1 count=1 conv=notrunc status=none
qemu-img convert -O qcow2 "$T/a.img" "$T/a.qcow2"
qemu-img convert -O qcow2 "$T/b.img" "$T/b.qcow2"
for stage in opened verifying@start; do
	cp "$T/a.qcow2" "$T/a2.qcow2"
	cp "$T/b.qcow2" "$T/b2.qcow2"
	ln -sfn a2.qcow2 "$T/link.qcow2"
	a=$(sha256sum <"$T/a2.qcow2")
	b=$(sha256sum <"$T/b2.qcow2")
	PAUSE_STAGE=$stage pause_e2trim -v "$T/link.qcow2"
	ln -sfn b2.qcow2 "$T/link.qcow2"
	resume_e2trim
	assert_rc 26 "qcow2 re-pointed at $stage"
	assert_grep "another file open than the one e2trim opened" "$ERR" "26's message ($stage)"
	assert_eq "$(sha256sum <"$T/a2.qcow2")" "$a" "A's bytes (qcow2, $stage)"
	assert_eq "$(sha256sum <"$T/b2.qcow2")" "$b" "B's bytes (qcow2, $stage)"
	note "qcow2: re-pointed at $stage: 26, both images unchanged"
done
exit 0
