# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kinds/vm_lib.sh - oracles of the qcow2 kinds, read by qemu-img alone.

# qcow2_left IMG FREE: bytes qemu-img map calls data of IMG's own layer
# (depth 0) inside FREE's extents
qcow2_left() {
	qemu-img map --output=json "$1" | python3 -c 'import json, sys
m = json.load(sys.stdin)
own = [(e["start"], e["start"] + e["length"]) for e in m
       if e.get("data") and e.get("depth", 0) == 0 and not e.get("zero")]
n = 0
for line in open(sys.argv[1]):
    a, l = map(int, line.split()); b = a + l
    for s, e in own:
        lo, hi = max(a, s), min(b, e)
        if hi > lo: n += hi - lo
print(n)' "$2"
}

# own_data IMG FMT RAW [BELOW]: write 0x5a through qemu-io over every other free
# extent of the filesystem in RAW into IMG's own layer (a guest that
# wrote and deleted), so that a trim has something of that layer to
# free, and free space the lower layer alone holds (a discard there
# would copy it up: the image would grow).  BELOW: only extents that
# start below that byte (an RBD clone: whole 4 MiB objects past it are the
# parent's alone, where a copy-up shows in rbd du)
own_data() {
	local img=$1 fmt=$2 below=${4:-} cmds=() s l i=0
	while read -r s l; do
		i=$((i + 1))
		[ -z "$below" ] || [ "$s" -lt "$below" ] || continue
		[ $((i % 2)) = 0 ] || cmds+=(-c "write -q -P 0x5a $s $l")
	done < <(oracle_extents "$3")
	qemu-io -f "$fmt" "${cmds[@]}" "$img" >/dev/null || fail "qemu-io: own data"
}

# victim RAW NAME: a copy of RAW owned by someone else (uid 65534): the
# file a hostile header names
victim() {
	cp --sparse=always "$1" "$T/$2"
	chown 65534:65534 "$T/$2"
	echo "$T/$2"
}
