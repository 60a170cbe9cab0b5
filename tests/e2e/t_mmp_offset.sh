#!/bin/bash
# MMP where libext2fs cannot reach the MMP block: e2trim says so (12).
# libext2fs reads the MMP block through its own descriptor on the
# filesystem's name, counted from byte 0 (ext2fs_mmp_read()), not through
# the I/O channel: in a partition of a disk image (-p N, ?offset=) it
# reads another block, through NBD (a qcow2) the name is not a file.
# e2fsck fails alike ("invalid MMP magic", exit 12).  Before, e2trim
# refused with 18, "in use by another node or by e2fsck ... (MMP: invalid
# magic number)", and the qcow2 with "check the device for I/O errors":
# both untrue.  Now, for each: exit 12, the message names MMP and why,
# the image is unchanged byte for byte, and the way the message gives
# (a loop device over the partition) trims it: exit 0, the MMP block
# clean afterwards, e2fsck -fn clean, the other partition unchanged.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
mmp_no_wait	# about where the MMP block is read, not another node
command -v qemu-img >/dev/null || skip "qemu-img not installed (make deps installs it)"

# partition 2 of a GPT disk: an aged ext4 with MMP
disk=$T/disk.img
gpt_disk "$disk"
off=$((67584 * 512)) size=$((196608 * 512))
tune2fs -O mmp -E mmp_update_interval=1 "$disk?offset=$off" >"$T/tune" 2>&1 ||
	{ cat "$T/tune"; fail "tune2fs -O mmp in partition 2"; }
sum=$(sha_of "$disk")

refused() {	# WHAT PATTERN: exit 12, MMP and why, nothing changed
	assert_rc 12 "$1"
	assert_grep "multi-mount protection (MMP)" "$ERR" "$1: names MMP"
	assert_grep "$2" "$ERR" "$1: says why"
	assert_eq "$(sha_of "$disk")" "$sum" "$1: the disk image after"
}
run_e2trim -p 2 "$disk"
refused "-p 2" "not at an offset inside an image"
assert_grep "losetup --find --show --offset $off --sizelimit $size " "$ERR" "-p 2: the loop device way"
run_e2trim -n "$disk?offset=$off"
refused "?offset= dry run" "not at an offset inside an image"
run_e2trim "$disk?offset=$off"
refused "?offset=" "not at an offset inside an image"

# the way the message gives
p1=$(dd if="$disk" bs=512 skip=2048 count=65536 status=none | sha256sum)
dev=$(loop_attach "$disk" --offset "$off" --sizelimit "$size")
LOOPS+=("$dev")
run_e2trim -v "$dev"
assert_rc 0 "e2trim on the loop device over partition 2"
assert_grep "trimmed$" "$OUT" "the loop device: a trim"
dfs_read "$dev" dump_mmp | grep -q '^sequence: ff4d4d50' || fail "the MMP block is not clean after"
e2fsck -fn "$dev" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn after"; }
losetup -d "$dev"; LOOPS=()
assert_eq "$(dd if="$disk" bs=512 skip=2048 count=65536 status=none | sha256sum)" "$p1" \
	"partition 1 after"
note "-p 2 and ?offset=: 12 with the loop device way; through it: trimmed, MMP clean, e2fsck clean"

# a qcow2 of an MMP filesystem: through NBD
dd if="$disk" of="$T/p2.raw" bs=512 skip=67584 count=196608 status=none
qemu-img convert -O qcow2 "$T/p2.raw" "$T/p2.qcow2" || fail "qemu-img convert"
sum=$(sha_of "$T/p2.qcow2")
run_e2trim "$T/p2.qcow2"
assert_rc 12 "qcow2"
assert_grep "not through NBD" "$ERR" "qcow2: says why"
assert_eq "$(sha_of "$T/p2.qcow2")" "$sum" "qcow2: the image after"
note "qcow2 with MMP: 12, through NBD"
exit 0
