# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind-needs: ceph
# kind "rbd": a Ceph RBD image, e2trim 'rbd:POOL/IMAGE:conf=FILE'.  Held
# alone: the watchers/locks check (and librbd's exclusive lock, not handed
# over, once rbdio lands); its writer is another librbd client (qemu-io
# with qemu's rbd driver, as a VM).
# shellcheck source=rbd_lib.sh
. "$CX/kinds/rbd_lib.sh"

kind_na() {
	case $1 in
	paths_*) echo "an RBD image's bytes live in RADOS objects, not in a file of this machine: its other paths (other clients) are librbd's lock and watchers, the RBD side of issue 41" ;;
	comesgoes) echo "no host file holds an RBD image's bytes: a librbd client that came and went meanwhile changed the header object's version, which e2trim compares under its lock (26; the writer scenario's librbd client)" ;;
	repoint) echo "the target is an RBD spec, not a path: librbd opens the image by its id once, no symlink leads to it" ;;
	esac
}
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
