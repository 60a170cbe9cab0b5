# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind-needs: ceph
# kind "rbd": a Ceph RBD image, e2trim 'rbd:POOL/IMAGE:conf=FILE'.  Held
# alone: the watchers/locks check (and librbd's exclusive lock, not handed
# over, once rbdio lands); its writer is another librbd client (qemu-io
# with qemu's rbd driver, as a VM).
# shellcheck source=rbd_lib.sh
. "$CX/kinds/rbd_lib.sh"

kind_na() { rbd_na "$1"; }
kind_make() {
	NAME=cx$RANDOM$RANDOM
	rbd_import "$1" "$NAME"
	[ -z "${2:-}" ] || r resize --no-progress --allow-shrink --size "$(($2 / 1048576))M" "$POOL/$NAME" ||
		fail "rbd resize"
	KARGS=("$(spec "$NAME")")
}
kind_copy() { rm -f "$1"; r export --no-progress "$POOL/$NAME" "$1" >/dev/null 2>&1 || fail "rbd export"; }
kind_write() { qemu_io_patch "$1" 0 raw "$(spec "$NAME")"; }
kind_state() { rbd_state "$NAME"; }
kind_alloc() { rbd_du "$NAME"; }
kind_left() { rbd_left "$NAME" "$1"; }
kind_held() { rbd_held "$NAME"; servers_of; }
kind_teardown_target() { kind_teardown; }
kind_names() { rbd_hostile create; }
