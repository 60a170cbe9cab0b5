#!/bin/bash
# A whole-disk qcow2 (GPT, a partition of other bytes, an aged ext4 in
# partition 2): e2trim -p 2 disk.qcow2 reads the table through NBD and
# trims partition 2 in place.  Converted back to raw, nothing outside the
# planned clusters changed (the table, partition 1, every used block),
# the planned clusters read as zeros and e2fsck -fn is clean.  Then, as
# root, the same as a user who owns the image and nothing else
# (setpriv --reuid=65534).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(dirname "$0")/..
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

img="$T/disk.raw"
gpt_disk "$img"
fs="$img?offset=$off"

q="$T/disk.qcow2"
qemu-img convert -O qcow2 "$img" "$q" || fail "qemu-img convert"
cluster=65536
# the plan in bytes of the disk, inward to whole clusters of the disk
oracle_extents "$fs" | aligned_extents "$cluster" "$off" >"$T/plan"
want=$(awk '{s += $2} END {print s + 0}' "$T/plan")
[ "$want" -gt 0 ] || fail "empty plan"

run_e2trim -n --list -p 2 "$q"
assert_rc 0 "dry run -p 2"
cmp -s "$OUT" "$T/plan" || { diff "$OUT" "$T/plan" | head; fail "--list differs from dumpe2fs"; }
run_e2trim -n -p 3 "$q"
assert_rc 11 "a partition that does not exist"
assert_grep "no partition 3 (the gpt table has: 1, 2)" "$ERR" "missing partition message"

# check_back QCOW2 WHAT: qemu-img check is clean; converted back to raw,
# nothing outside the planned clusters changed, each planned cluster
# reads as zeros, and e2fsck -fn is clean
check_back() {
	local q=$1 what=$2
	qemu-img check "$q" >/dev/null 2>&1 || fail "$what: qemu-img check"
	rm -f "$T/back.raw"
	qemu-img convert -O raw "$q" "$T/back.raw" || fail "$what: convert back"
	python3 "$here/same_outside.py" "$img" "$T/back.raw" "$T/plan" "$cluster" >/dev/null ||
		fail "$what: bytes outside the planned clusters changed"
	python3 "$here/holes.py" "$T/back.raw" "$T/plan" "$cluster" >/dev/null ||
		fail "$what: a planned cluster is not zeros"
	e2fsck -fn "$T/back.raw?offset=$off" >/dev/null 2>&1 || fail "$what: e2fsck after"
}

# trim: QCOW and OWNER are the image and who runs e2trim
trim_p2() {
	local q=$1 who=("${@:2}") alloc0 alloc1
	alloc0=$(alloc_bytes "$q")
	RC=0
	"${who[@]}" "$E2TRIM" -v -p 2 "$q" >"$T/out" 2>"$T/err" || RC=$?
	assert_rc 0 "trim -p 2 ${who[*]}"
	assert_grep "($want bytes) trimmed" "$T/out" "reported bytes"
	alloc1=$(alloc_bytes "$q")
	[ $(( (alloc0 - alloc1) * 10 )) -ge $((want * 9)) ] ||
		fail "qcow2 shrank by $((alloc0 - alloc1)), less than 90 % of $want"
	check_back "$q" "-p 2"
	note "partition 2 in qcow2 ${who[*]}: $alloc0 -> $alloc1 bytes allocated"
}
cp "$q" "$T/orig.qcow2"
trim_p2 "$q"

# without -p: a whole disk, refused with 27 and its ext partition named;
# -p all: every ext partition (here 2 only), the same bytes as -p 2
cp "$T/orig.qcow2" "$T/all.qcow2"
run_e2trim -n "$T/all.qcow2"
assert_rc 27 "whole-disk qcow2 without -p"
assert_grep "its ext partition: 2 (ext4)" "$ERR" "27 names partition 2"
run_e2trim -v -p all "$T/all.qcow2"
assert_rc 0 "-p all through NBD"
assert_grep "partition 2: .*($want bytes) trimmed" "$OUT" "-p all: partition 2's bytes"
check_back "$T/all.qcow2" "-p all"

# a user who owns the image and nothing else
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir "$T/nobody"
	chmod 711 "$T"
	cp "$T/orig.qcow2" "$T/nobody/disk.qcow2"
	chown -R 65534:65534 "$T/nobody"
	trim_p2 "$T/nobody/disk.qcow2" env TMPDIR="$T/nobody" \
		setpriv --reuid=65534 --regid=65534 --clear-groups
	[ "$(stat -c %u "$T/nobody/disk.qcow2")" = 65534 ] || fail "owner changed"
else
	left_out "the run as another user (needs root and setpriv)"
fi
finish
