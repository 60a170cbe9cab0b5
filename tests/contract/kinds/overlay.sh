# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind "overlay": a qcow2 over a raw backing file, e2trim overlay.qcow2.
# The overlay holds its own data in the filesystem's free space (written
# by a guest, then deleted); the backing file is never written.  Held
# alone: qemu's image locks; its writer is a VM's qemu.
# shellcheck source=vm_lib.sh
. "$CX/kinds/vm_lib.sh"
KIND_WHOLE=1
KIND_MMP=0

kind_na() {
	case $1 in
	comesgoes) echo "no host file holds the filesystem's bytes raw (qcow2 clusters over a backing file): as qcow2, held by qemu-nbd's write lock" ;;
	esac
}
kind_make() {
	BASE=$T/base.raw IMG=$T/overlay.qcow2
	cp --sparse=always "$1" "$BASE"
	qemu-img create -q -f qcow2 -b "$BASE" -F raw "$IMG" ${2:+"$2"} || fail "qemu-img create overlay"
	[ -n "${2:-}" ] || [ -n "${KIND_PLAIN:-}" ] || own_data "$IMG" qcow2 "$1"
	KARGS=("$IMG")
}
kind_copy() { qemu-img convert -f qcow2 -O raw "$IMG" "$1"; }
kind_write() { qemu_io_patch "$1" 0 qcow2 "$IMG"; }
kind_state() { file_state "$IMG" "$BASE"; }
kind_alloc() { alloc_bytes "$IMG"; }
kind_bytes() { echo "$IMG -"; }
kind_left() { qcow2_left "$IMG" "$1"; }
kind_held() { locks_on "$IMG" "$BASE"; servers_of; }
# its backing file pointed at another user's raw image (only read: a
# template under another uid is common; it must stay unchanged, the run
# may go on), then at a loop device over another user's image (refused)
kind_names() {
	local v dev
	v=$(victim "$CX_FIX/fs.raw" other.raw)
	qemu-img create -q -f qcow2 -b "$v" -F raw "$T/ob.qcow2" || fail "qemu-img create -b"
	own_data "$T/ob.qcow2" qcow2 "$CX_FIX/fs.raw"
	printf '%s\t%s\tread\n' "$v" "$T/ob.qcow2"
	v=$(victim "$CX_FIX/fs.raw" other2.raw)
	dev=$(loop_attach "$v")
	qemu-img create -q -f qcow2 -b "$dev" -F raw "$T/obdev.qcow2" || fail "qemu-img create -b device"
	own_data "$T/obdev.qcow2" qcow2 "$CX_FIX/fs.raw"
	printf '%s\t%s\trefuse\n' "$v" "$T/obdev.qcow2"
}
