# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind-needs: ceph
# kind "rbddp": an RBD image whose data objects live in another pool
# (rbd create/import --data-pool, erasure-coded setups): its header is
# rbd_header.<image id> in the image's pool, while block_name_prefix
# names the data pool (rbd_data.<data pool id>.<image id>).  Otherwise
# as "rbd" (issue 46, point 2).
# shellcheck source=rbd_lib.sh
. "$CX/kinds/rbd_lib.sh"
DPOOL=rbddp

kind_na() { rbd_na "$1"; }
# the data pool, made once per cluster (both commands take an existing one)
data_pool() {
	ceph -c "$C" osd pool ls | grep -qx "$DPOOL" && return 0
	ceph -c "$C" osd pool create "$DPOOL" 8 8 >/dev/null 2>&1 || fail "ceph osd pool create $DPOOL"
	timeout 120 rbd -c "$C" pool init "$DPOOL" || fail "rbd pool init $DPOOL"
}
kind_make() {
	NAME=cx$RANDOM$RANDOM
	data_pool
	r import --no-progress --data-pool "$DPOOL" "$1" "$POOL/$NAME" || fail "rbd import --data-pool $NAME"
	RBD_IMAGES=("$NAME" "${RBD_IMAGES[@]}")
	[ -z "${2:-}" ] || r resize --no-progress --allow-shrink --size "$(($2 / 1048576))M" "$POOL/$NAME" ||
		fail "rbd resize"
	KARGS=("$(spec "$NAME")")
}
kind_copy() { rm -f "$1"; r export --no-progress "$POOL/$NAME" "$1" >/dev/null 2>&1 || fail "rbd export"; }
kind_write() { qemu_io_patch "$1" 0 raw "$(spec "$NAME")"; }
# as "rbd", and its objects in the data pool
kind_state() {
	local id
	rbd_state "$NAME"
	id=$(r info --format json "$POOL/$NAME" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	rados -c "$C" -p "$DPOOL" ls | grep -F "$id" | sort | tr '\n' ' '
	echo
}
kind_alloc() { rbd_du "$NAME"; }
kind_left() { rbd_left "$NAME" "$1"; }
kind_held() { rbd_held "$NAME"; servers_of; }
kind_teardown_target() { kind_teardown; }
