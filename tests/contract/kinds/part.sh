# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind "part": partition 1 of a whole-disk image named with -p 1,
# e2trim -p 1 disk.img.  Held alone: qemu's image locks on the
# disk image; its writer is a VM's qemu on the whole disk.
# shellcheck source=disk_lib.sh
. "$CX/kinds/disk_lib.sh"
KIND_WHOLE=0
# MMP: as "offset" (libext2fs reads it without the partition's offset)
KIND_MMP=0

kind_na() {
	case $1 in
	stale) echo "the target is one partition, named by its number: the table is what places it" ;;
	names) echo "a raw disk image names no other file: the path given is the only name" ;;
	esac
}
kind_make() { disk_make "$@"; KARGS=(-p 1 "$IMG"); }
kind_copy() { disk_copy "$1"; }
kind_write() { qemu_io_patch "$1" "$OFF" raw "$IMG"; }
kind_state() { file_state "$IMG"; }
kind_alloc() { alloc_bytes "$IMG"; }
kind_bytes() { echo "$IMG $OFF"; }
kind_left() { data_in "$IMG" "$OFF" "$1"; }
kind_held() { locks_on "$IMG"; servers_of; }
# where the filesystem's bytes lie raw: FILE OFFSET (scenario comesgoes)
kind_raw_at() { echo "$IMG $OFF"; }
