# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kinds/rbd_lib.sh - what the RBD kinds share: the cluster of tests/ceph/
# (run.sh starts one, or tests/ceph/run.sh's is used), and oracles read
# by the rbd and rados commands alone.
# shellcheck source=vm_lib.sh
. "$CX/kinds/vm_lib.sh"
: "${CEPH_CONF:?the RBD kinds need the cluster of tests/ceph/}"
C=$CEPH_CONF
POOL=rbd
KIND_WHOLE=1
KIND_MMP=0
RBD_IMAGES=()	# made by this case, removed at its end (children first)

r() { rbd -c "$C" "$@"; }
spec() { echo "rbd:$POOL/$1:conf=$C"; }

rbd_import() {	# SRC NAME
	r import --no-progress "$1" "$POOL/$2" || fail "rbd import $2"
	RBD_IMAGES=("$2" "${RBD_IMAGES[@]}")
}
rbd_du() {
	r du --exact --format json "$POOL/$1" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["images"][-1]["used_size"])'
}
# rbd_state NAME: its bytes, size, Ceph's count, and the objects of its
# own (names; the header's and object map's mtime and size)
rbd_state() {
	local id o
	id=$(r info --format json "$POOL/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	echo "$1 $(r export --no-progress "$POOL/$1" - 2>/dev/null | sha256sum | cut -c1-16) size $(r info --format json "$POOL/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])') du $(rbd_du "$1")"
	rados -c "$C" -p "$POOL" ls | grep -F "$id" | sort | tr '\n' ' '
	echo
	for o in "rbd_header.$id" "rbd_object_map.$id"; do
		rados -c "$C" -p "$POOL" stat "$o" 2>&1
	done
}
# rbd_held NAME: its locks and watchers, one line each
rbd_held() {
	r lock ls --format json "$POOL/$1" | python3 -c 'import json,sys
for l in json.load(sys.stdin) or []: print("rbd lock:", l)'
	r status --format json "$POOL/$1" | python3 -c 'import json,sys
for w in json.load(sys.stdin).get("watchers", []): print("rbd watcher:", w["address"])'
}
# rbd_left NAME FREE: what rbd diff calls data inside FREE's extents, each
# data extent widened to librbd's 64 KiB discard granularity
rbd_left() {
	r diff --format json "$POOL/$1" | python3 -c 'import json, sys
g = 65536
d = [(e["offset"] // g * g, -(-(e["offset"] + e["length"]) // g) * g)
     for e in json.load(sys.stdin) if e.get("exists") in (True, "true")]
n = 0
for line in open(sys.argv[1]):
    a, l = map(int, line.split()); b = a + l
    for s, e in d:
        lo, hi = max(a, s), min(b, e)
        if hi > lo: n += hi - lo
print(n)' "$2"
}

# hostile names (issue 33 case 2): images whose names, as `rbd ls`
# prints them, turn into Ceph options in the README's fleet recipe; each
# key makes librados touch a local file, here someone else's.  Made
# through librbd's C API (rbd_named.py): the rbd command cannot take them.
RBD_NAMED=()
named() { python3 "$CX/kinds/rbd_named.py" "$C" "$POOL" "$@"; }
rbd_hostile() {	# create | clone PARENT SNAP: how rbd_named.py makes it
	local key v name
	for key in admin_socket log_file; do
		v=$T/victim.$key
		head -c 4096 /dev/urandom >"$v"
		chown 65534:65534 "$v"
		name="cx${RANDOM}v:$key=$v"
		if [ "$1" = create ]; then
			named "$name" create "$CX_FIX/fs.raw" || fail "librbd: create $name"
		else
			named "$name" "$@" || fail "librbd: clone $name"
		fi
		RBD_NAMED+=("$name")
		r ls "$POOL" | grep -F -x "$name" | sed "s|^|rbd:$POOL/|" >"$T/list.$key"
		[ -s "$T/list.$key" ] || fail "rbd ls does not list $name"
		printf '%s\t%s\trefuse\n' "$v" "--targets-from $T/list.$key"
	done
}

kind_teardown() {
	local n
	for n in "${RBD_NAMED[@]}"; do named "$n" remove >/dev/null 2>&1; done
	RBD_NAMED=()
	for n in "${RBD_IMAGES[@]}"; do
		r snap unprotect "$POOL/$n@s" >/dev/null 2>&1
		r snap purge --no-progress "$POOL/$n" >/dev/null 2>&1
		r rm --no-progress "$POOL/$n" >/dev/null 2>&1
	done
	RBD_IMAGES=()
}

# rbd_na SCENARIO: why a scenario does not apply to any RBD kind (none
# of their bytes lives in a file of this machine)
rbd_na() {
	case $1 in
	paths_*) echo "an RBD image's bytes live in RADOS objects, not in a file of this machine: its other paths (other clients) are librbd's lock and watchers, the RBD side of issue 41" ;;
	comesgoes) echo "no host file holds an RBD image's bytes: a librbd client that came and went meanwhile changed the header object's version, which e2trim compares under its lock (26; the writer scenario's librbd client)" ;;
	repoint) echo "the target is an RBD spec, not a path: librbd opens the image by its id once, no symlink leads to it" ;;
	esac
}
