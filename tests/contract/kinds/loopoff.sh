# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind "loopoff": a loop device made with losetup -o (partition 1's start)
# and no size limit over a whole-disk image, e2trim /dev/loopN.  Held
# alone: O_EXCL on the device; its writer is a mount.  What bounds it is
# the backing file's partition table, not the device's size.
# shellcheck source=disk_lib.sh
. "$CX/kinds/disk_lib.sh"
KIND_WHOLE=0
KIND_MMP=1

kind_na() {
	case $1 in
	stale) echo "the device starts at partition 1: no superblock at the disk's byte 0 is seen through it" ;;
	names) echo "a loop device names its backing file through the kernel, which root attached: no name is read from the target" ;;
	esac
}
kind_make() { disk_make "$@"; DEV=$(loop_attach "$IMG" -o "$OFF"); KARGS=("$DEV"); }
kind_copy() { disk_copy "$1"; }
kind_write() { mount_patch "$1" "$DEV"; }
kind_state() { file_state "$IMG"; losetup -n -O NAME,SIZELIMIT,OFFSET,RO "$DEV"; }
kind_alloc() { alloc_bytes "$IMG"; }
kind_bytes() { echo "$IMG $OFF"; }
kind_left() { echo -; }
kind_held() { locks_on "$IMG" "$DEV"; servers_of; }
kind_teardown_target() { losetup -d "$DEV"; }
# where the filesystem's bytes lie raw: FILE OFFSET (scenario comesgoes)
kind_raw_at() { echo "$IMG $OFF"; }
