#!/bin/bash
# qcow2 overlays: only what the top layer holds can be freed.  An aged
# ext4 in a qcow2 backing file, and
#  - an untouched overlay over it: e2trim trims nothing ("0 bytes"), the
#    overlay's qemu-img map and allocated size stay as they were, the
#    backing file's sha256 too (a trim over a backing file's cluster
#    only writes a zero cluster into the overlay: it grew);
#  - an overlay holding a file written and deleted in it (the clusters
#    that differ from the backing file written into it by qemu-io):
#    exactly the top layer's clusters inside the plan are trimmed
#    and reported (from qemu-img map's depth 0 data), the overlay shrinks
#    by them, converted back nothing outside the plan changed and e2fsck
#    -fn is clean, the backing file is unchanged;
#  - the same overlay as compat=0.10 (qcow2 v2), where qemu drops every
#    discard: "nothing can be freed in this image", 0 bytes reported, its
#    sha256 unchanged; --zero-fill is refused saying the same.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

cluster=65536
base_raw=$T/base.raw
mkfs "$base_raw" 64M -t ext4
age "$base_raw" 7
qemu-img convert -O qcow2 "$base_raw" "$T/base.qcow2" || fail "convert base"
base_sum=$(sha256sum "$T/base.qcow2" | cut -d' ' -f1)
trimmed_of() { sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$OUT"; }
map_of() { qemu-img map -U --output=json "$1" || fail "qemu-img map $1"; }

# 1. an untouched overlay
ov=$T/untouched.qcow2
qemu-img create -q -f qcow2 -b "$T/base.qcow2" -F qcow2 "$ov" || fail "create overlay"
map_of "$ov" >"$T/map0"
alloc0=$(alloc_bytes "$ov")
run_e2trim -v "$ov"
assert_rc 0 "untouched overlay"
assert_eq "$(trimmed_of)" 0 "bytes trimmed in an untouched overlay"
map_of "$ov" >"$T/map1"
cmp -s "$T/map0" "$T/map1" || { diff "$T/map0" "$T/map1" | head; fail "the overlay's map changed"; }
[ "$(alloc_bytes "$ov")" -le "$alloc0" ] || fail "the overlay grew: $alloc0 -> $(alloc_bytes "$ov")"
assert_eq "$(sha256sum "$T/base.qcow2" | cut -d' ' -f1)" "$base_sum" "backing file after the untouched overlay"
note "untouched overlay: 0 bytes trimmed, $alloc0 bytes allocated before and after"

# 2. a file written and deleted in the overlay
mod=$T/mod.raw
cp --sparse=always "$base_raw" "$mod"
head -c $((6 << 20)) /dev/urandom >"$T/big"
debugfs -w -R "write $T/big big" "$mod" >/dev/null 2>&1 || fail "debugfs write"
debugfs -w -R "rm big" "$mod" >/dev/null 2>&1 || fail "debugfs rm"
# overlay_of IMG [OPTS]: an overlay over base.qcow2 holding exactly the
# clusters where mod.raw differs from base.raw
overlay_of() {
	local args
	qemu-img create -q -f qcow2 ${2:+-o "$2"} -b "$T/base.qcow2" -F qcow2 "$1" 64M ||
		fail "create $1"
	mapfile -t args < <(python3 - "$base_raw" "$mod" "$T/c" $cluster <<'PY'
import sys
a, b, pre, cl = open(sys.argv[1], "rb"), open(sys.argv[2], "rb"), sys.argv[3], int(sys.argv[4])
off = 0
while True:
    x, y = a.read(cl), b.read(cl)
    if not y:
        break
    if x != y:
        open("%s.%d" % (pre, off), "wb").write(y)
        print("-c")
        print("write -q -s %s.%d %d %d" % (pre, off, off, cl))
    off += cl
PY
	)
	[ ${#args[@]} -gt 0 ] || fail "mod.raw does not differ from base.raw"
	qemu-io -f qcow2 "${args[@]}" "$1" || fail "qemu-io into $1"
	rm -f "$T"/c.*
}
top=$T/top.qcow2
overlay_of "$top"
oracle_extents "$mod" | aligned_extents $cluster >"$T/plan"
# what the top layer holds (depth 0 data) inside the plan
top_in_plan() {
	map_of "$1" | python3 -c '
import json, sys
top = [(e["start"], e["start"] + e["length"]) for e in json.load(sys.stdin)
       if e["depth"] == 0 and e["data"]]
n = 0
for line in open(sys.argv[1]):
    s, l = map(int, line.split())
    for a, b in top:
        n += max(0, min(b, s + l) - max(a, s))
print(n)' "$T/plan"
}
want=$(top_in_plan "$top")
[ "$want" -ge $((4 << 20)) ] || fail "only $want bytes of the top layer are free: the fixture is wrong"
alloc0=$(alloc_bytes "$top")
run_e2trim -v "$top"
assert_rc 0 "overlay with a deleted file"
assert_eq "$(trimmed_of)" "$want" "bytes trimmed: the top layer's clusters in the plan"
alloc1=$(alloc_bytes "$top")
[ $(( (alloc0 - alloc1) * 10 )) -ge $((want * 9)) ] ||
	fail "the overlay shrank by $((alloc0 - alloc1)), less than 90 % of $want"
assert_eq "$(top_in_plan "$top")" 0 "top-layer data left inside the plan"
qemu-img check "$top" >/dev/null 2>&1 || fail "qemu-img check"
qemu-img convert -O raw "$top" "$T/back.raw" || fail "convert back"
python3 "$here/same_outside.py" "$mod" "$T/back.raw" "$T/plan" $cluster >/dev/null ||
	fail "bytes outside the plan changed"
e2fsck -fn "$T/back.raw" >/dev/null 2>&1 || fail "e2fsck after"
assert_eq "$(sha256sum "$T/base.qcow2" | cut -d' ' -f1)" "$base_sum" "backing file after the overlay's trim"
run_e2trim -v "$top"
assert_rc 0 "the overlay again"
assert_eq "$(trimmed_of)" 0 "a second run trims nothing"
[ "$(alloc_bytes "$top")" -le "$alloc1" ] || fail "the second run grew the overlay"
note "overlay: $want bytes of its own freed, allocated $alloc0 -> $alloc1"

# 3. the same as compat=0.10: qemu drops every discard there
v2=$T/top-v2.qcow2
overlay_of "$v2" compat=0.10
sum=$(sha256sum "$v2" | cut -d' ' -f1)
run_e2trim -v "$v2"
assert_rc 0 "compat=0.10 overlay"
assert_grep "nothing can be freed in this image" "$ERR" "v2 overlay: warning"
assert_grep "qemu-img amend -f qcow2 -o compat=1.1" "$ERR" "v2 overlay: the fix"
assert_eq "$(trimmed_of)" 0 "v2 overlay: bytes reported"
run_e2trim -v --zero-fill "$v2"
assert_rc 3 "v2 overlay --zero-fill (a usage error, as on any VM image)"
assert_grep "nothing can be freed in this image" "$ERR" "v2 overlay --zero-fill: message"
assert_eq "$(sha256sum "$v2" | cut -d' ' -f1)" "$sum" "v2 overlay sha256"
note "compat=0.10 overlay: nothing sent, 0 bytes reported, unchanged"
exit 0
