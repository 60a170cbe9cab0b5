# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind "loop": a loop device over an image file, e2trim /dev/loopN.  Held
# alone: O_EXCL on the device (a mount, mkfs, e2fsck are kept out) and
# qemu's image locks on the device node; its writer is a mount.
KIND_WHOLE=1
KIND_MMP=1

kind_na() {
	case $1 in
	names) echo "a loop device names its backing file through the kernel, which root attached: no name is read from the target" ;;
	esac
}

kind_make() {
	IMG=$T/k.img
	cp --sparse=always "$1" "$IMG"
	if [ -n "${2:-}" ]; then
		# the filesystem larger than the device: the file keeps all
		# of it, the device shows SIZE bytes (losetup --sizelimit)
		DEV=$(loop_attach "$IMG" --sizelimit "$2")
	else
		DEV=$(loop_attach "$IMG")
	fi
	KARGS=("$DEV")
}
kind_copy() {
	local n
	n=$(blockdev --getsize64 "$DEV")
	head -c "$n" "$IMG" >"$1"
}
kind_write() { mount_patch "$1" "$DEV"; }
kind_state() { file_state "$IMG"; losetup -n -O NAME,SIZELIMIT,OFFSET,RO "$DEV"; }
kind_alloc() { alloc_bytes "$IMG"; }
kind_bytes() { echo "$IMG 0"; }
# a block device keeps no map e2trim could ask: every run discards all
kind_left() { echo -; }
kind_held() { locks_on "$IMG" "$DEV"; servers_of; }
kind_teardown_target() { losetup -d "$DEV"; }
# where the filesystem's bytes lie raw: FILE OFFSET (scenario comesgoes)
kind_raw_at() { echo "$IMG 0"; }
