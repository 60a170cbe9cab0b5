# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind-needs: ceph
# kind "rbdclone": a clone of a protected snapshot of an RBD image (as
# OpenStack and Proxmox make a VM's disk), e2trim 'rbd:POOL/CLONE:...'.
# The clone holds its own data in the free space (written by a guest,
# then deleted); its own layer only is trimmed, the parent never.  Held
# alone and its writer: as "rbd".
# shellcheck source=rbd_lib.sh
. "$CX/kinds/rbd_lib.sh"

kind_na() { rbd_na "$1"; }
clone_of() {	# SRC NAME [SIZE]
	rbd_import "$1" "$2-p"
	r snap create --no-progress "$POOL/$2-p@s" >/dev/null || fail "rbd snap create"
	r snap protect "$POOL/$2-p@s" || fail "rbd snap protect"
	r clone "$POOL/$2-p@s" "$POOL/$2" || fail "rbd clone"
	RBD_IMAGES=("$2" "${RBD_IMAGES[@]}")
	if [ -n "${3:-}" ]; then
		r resize --no-progress --allow-shrink --size "$(($3 / 1048576))M" "$POOL/$2" ||
			fail "rbd resize"
	elif [ -z "${KIND_PLAIN:-}" ]; then
		own_data "$(spec "$2")" raw "$1" $((16 << 20))
	fi
}
kind_make() {
	NAME=cx$RANDOM$RANDOM
	clone_of "$1" "$NAME" "${2:-}"
	KARGS=("$(spec "$NAME")")
}
kind_copy() { rm -f "$1"; r export --no-progress "$POOL/$NAME" "$1" >/dev/null 2>&1 || fail "rbd export"; }
kind_write() { qemu_io_patch "$1" 0 raw "$(spec "$NAME")"; }
kind_state() { rbd_state "$NAME"; rbd_state "$NAME-p"; }
kind_alloc() { rbd_du "$NAME"; }
kind_left() { rbd_left "$NAME" "$1"; }
kind_held() { rbd_held "$NAME"; rbd_held "$NAME-p"; servers_of; }
kind_teardown_target() { kind_teardown; }
# the clone's name is the hostile one; its parent's is plain
kind_names() {
	local p=cx$RANDOM$RANDOM-p
	rbd_import "$CX_FIX/fs.raw" "$p"
	r snap create --no-progress "$POOL/$p@s" >/dev/null || fail "rbd snap create"
	r snap protect "$POOL/$p@s" || fail "rbd snap protect"
	rbd_hostile clone "$p" s
}
