# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind "qcow2": a qcow2 image, e2trim vm.qcow2 (e2trim's own qemu-nbd).
# Held alone: qemu's image lock of that qemu-nbd (read-only, then
# read-write); its writer is a VM's qemu (qemu-io -f qcow2).
# shellcheck source=vm_lib.sh
. "$CX/kinds/vm_lib.sh"
KIND_WHOLE=1
KIND_MMP=0

kind_na() {
	case $1 in
	comesgoes) echo "no host file holds the filesystem's bytes raw (qcow2 clusters): a loop device over the image cannot mount it, and qemu-nbd e2trim started holds qemu's write lock on the image, which every qemu writer honours (writer scenario); a writer that came and went between the read-only and the writable qemu-nbd is caught by the superblock compared across the restart" ;;
	esac
}
kind_make() {
	IMG=$T/vm.qcow2
	qemu-img convert -f raw -O qcow2 "$1" "$IMG" || fail "qemu-img convert"
	[ -z "${2:-}" ] || qemu-img resize -q --shrink -f qcow2 "$IMG" "$2" || fail "qemu-img resize"
	KARGS=("$IMG")
}
kind_copy() { qemu-img convert -f qcow2 -O raw "$IMG" "$1"; }
kind_write() { qemu_io_patch "$1" 0 qcow2 "$IMG"; }
kind_state() { file_state "$IMG"; }
kind_alloc() { alloc_bytes "$IMG"; }
kind_bytes() { echo "$IMG -"; }
kind_left() { qcow2_left "$IMG" "$1"; }
kind_held() { locks_on "$IMG"; servers_of; }
# its external data file pointed at another user's raw image, then at a
# loop device over another user's image.  Made as a hostile header is:
# the qcow2 made over a scratch data file (preallocated metadata, every
# cluster mapped), then its data file name changed (qemu-img amend
# writes the header only).
df_qcow2() {	# QCOW2 DATA_FILE
	qemu-img create -q -f qcow2 -o data_file="$T/scratch.raw",data_file_raw=on,preallocation=metadata \
		"$1" 32M || fail "qemu-img create data_file"
	qemu-img amend -f qcow2 -o data_file="$2" "$1" || fail "qemu-img amend data_file"
	rm -f "$T/scratch.raw"
}
kind_names() {
	local v dev
	v=$(victim "$CX_FIX/fs.raw" other.raw)
	df_qcow2 "$T/df.qcow2" "$v"
	printf '%s\t%s\trefuse\n' "$v" "$T/df.qcow2"
	v=$(victim "$CX_FIX/fs.raw" other2.raw)
	dev=$(loop_attach "$v")
	df_qcow2 "$T/dfdev.qcow2" "$dev"
	printf '%s\t%s\trefuse\n' "$v" "$T/dfdev.qcow2"
}
