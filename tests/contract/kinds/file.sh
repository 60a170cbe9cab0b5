# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind "file": a raw image file, e2trim IMAGE.  Held alone: qemu's image
# locks (OFD) from open to exit; its writer is a VM's qemu (qemu-io).
KIND_WHOLE=1
KIND_MMP=1

kind_na() {
	case $1 in
	names) echo "a raw image names no other file: the path given is the only name" ;;
	esac
}

kind_make() {
	IMG=$T/k.img
	cp --sparse=always "$1" "$IMG"
	[ -z "${2:-}" ] || truncate -s "$2" "$IMG"
	KARGS=("$IMG")
}
kind_copy() { cp --sparse=always "$IMG" "$1"; }
kind_write() { qemu_io_patch "$1" 0 raw "$IMG"; }
kind_state() { file_state "$IMG"; }
kind_alloc() { alloc_bytes "$IMG"; }
kind_bytes() { echo "$IMG 0"; }
kind_left() { data_in "$IMG" 0 "$1"; }
kind_held() { locks_on "$IMG"; servers_of; }
# where the filesystem's bytes lie raw: FILE OFFSET (scenario comesgoes)
kind_raw_at() { echo "$IMG 0"; }
