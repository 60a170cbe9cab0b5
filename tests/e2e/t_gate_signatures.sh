#!/bin/bash
# Other signatures at the filesystem's bytes (issue 41, point 4).  A disk
# that held a whole-disk ext4 and then became an LVM physical volume
# keeps the old superblock at byte 1024: pvcreate writes its label in
# sector 1 only (here written by hand, CRC and all, as libblkid checks
# it: "LABELONE" at byte 512, "LVM2 001" at 536).  libext2fs opens the
# stale ext4 as if it were the disk's; its free blocks are the LV's data.
#  - the image, a dry run, a loop device over it and the same image as a
#    qcow2 (through qemu-nbd: libblkid reads a copy of its edges) are
#    refused with 24, the message naming "LVM2_member at byte 536", and
#    not one byte changes (sha256); today's main trimmed it (exit 0);
#  - the same inside partition 2 of a dos disk: -p 2, ?offset= and a loop
#    device at the partition's offset (losetup -o) are refused with 24,
#    while -p 1 (a clean ext4) still trims;
#  - legitimate images are not refused: mke2fs over an old LVM label
#    wipes it (sector 1), and e2trim trims that image (exit 0), as it
#    trims a fresh mke2fs image and one made with mke2fs -E offset.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

# refused WHAT FILE ARGS...: e2trim ARGS exits 24 naming the LVM label,
# and FILE's bytes stay as they were
refused() {
	local what=$1 file=$2 sum; shift 2
	sum=$(sha_of "$file")
	run_e2trim "$@"
	assert_rc 24 "$what"
	assert_grep "LVM2_member at byte 536" "$ERR" "$what: names the label"
	assert_grep "wipefs" "$ERR" "$what: names the fix"
	assert_eq "$(sha_of "$file")" "$sum" "$what: sha256"
}

# the whole image: an aged ext4 with an LVM label over it
img=$T/pv.img
truncate -s 64M "$img"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard "$img" ||
	fail "mke2fs"
age_part "$img" 0 20 5 64
lvm_label "$img" 0
wipefs "$img" | grep -q LVM2_member || fail "wipefs does not see the label"
refused "an ext4 under an LVM label" "$img" -v "$img"
refused "a dry run" "$img" -n "$img"
loop=$(loop_attach "$img")
refused "a loop device over it" "$img" -v "$loop"
losetup -d "$loop"
if command -v qemu-img >/dev/null && command -v qemu-nbd >/dev/null; then
	qemu-img convert -f raw -O qcow2 "$img" "$T/pv.qcow2" || fail "qemu-img convert"
	refused "the same as a qcow2" "$T/pv.qcow2" -v "$T/pv.qcow2"
else
	left_out "qcow2 (no qemu-img or qemu-nbd)"
fi

# partition 2 of a whole-disk image: -p 2, ?offset= and losetup -o
img=$T/disk.img
truncate -s 96M "$img"
printf 'label: dos\nstart=2048, size=65536, type=83\nstart=67584, type=83\n' |
	sfdisk -q "$img" || fail "sfdisk"
p1=$((2048 * 512)) p2=$((67584 * 512))
for off in $p1 $p2; do
	mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset="$off" "$img" 30M ||
		fail "mke2fs at $off"
done
age_part "$img" $p1 20 5 32
lvm_label "$img" $p2
refused "-p 2 under an LVM label" "$img" -v -p 2 "$img"
refused "?offset= under an LVM label" "$img" -v "$img?offset=$p2"
loop=$(loop_attach "$img" -o $p2)
refused "losetup -o under an LVM label" "$img" -v "$loop"
losetup -d "$loop"
run_e2trim -v -p 1 "$img"
assert_rc 0 "-p 1 (no other signature) on the same disk"
e2fsck -fn "$img?offset=$p1" >/dev/null 2>&1 || fail "e2fsck -fn of partition 1"

# legitimate: mke2fs over an old label wipes it; fresh and -E offset too
img=$T/over.img
truncate -s 32M "$img"
lvm_label "$img" 0
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard "$img" ||
	fail "mke2fs over the label"
! wipefs "$img" | grep -q LVM2_member || fail "mke2fs left the LVM label"
run_e2trim -v "$img"
assert_rc 0 "mke2fs over an old LVM label"
img=$T/fresh.img
truncate -s 32M "$img"
mke2fs -q -F -t ext4 "$img" || fail "mke2fs"
run_e2trim -v "$img"
assert_rc 0 "a fresh mke2fs image"
img=$T/off.img
truncate -s 40M "$img"
mke2fs -q -F -t ext4 -E offset=$((4 << 20)) "$img" 32M || fail "mke2fs -E offset"
run_e2trim -v "$img?offset=$((4 << 20))"
assert_rc 0 "mke2fs -E offset"
finish
