#!/bin/bash
# A qcow2 VM image, trimmed in place through qemu-nbd: an aged ext4 with a
# large file deleted, converted with qemu-img.  The dry run changes
# nothing; the trim makes the qcow2 file smaller by at least 90 % of the
# free space that was allocated (whole clusters only); qemu-img check is
# clean; converted back to raw every used block is what it was and
# e2fsck -fn is clean; a second run trims nothing and the file does not
# grow.  An empty filesystem's qcow2 does not grow either (a trim over a
# hole would make it).  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

raw="$T/fs.raw" q="$T/fs.qcow2"
mkfs "$raw" 192M -t ext4
age "$raw" 7
# a large file, written then deleted: its blocks keep their bytes
head -c $((48 << 20)) /dev/zero | tr '\0' '\246' >"$T/large"
debugfs -w -R "write $T/large large" "$raw" >/dev/null 2>&1 || fail "debugfs write"
debugfs -w -R "rm large" "$raw" >/dev/null 2>&1 || fail "debugfs rm"
rm -f "$T/large"
e2fsck -fn "$raw" >/dev/null 2>&1 || fail "e2fsck before"
used0=$(used_blocks_digest "$raw")
qemu-img convert -O qcow2 "$raw" "$q" || fail "qemu-img convert"
cluster=$(qemu-img info --output=json "$q" | sed -n 's/.*"cluster-size": \([0-9]*\).*/\1/p')
[ "$cluster" = 65536 ] || fail "cluster size $cluster"

# the free space, from dumpe2fs alone, in whole clusters
oracle_extents "$raw" | aligned_extents "$cluster" >"$T/plan"
want=$(awk '{s += $2} END {print s + 0}' "$T/plan")
[ "$want" -gt $((48 << 20)) ] || fail "plan too small: $want"

sum=$(sha_of "$q")
run_e2trim -n -v "$q"
assert_rc 0 "dry run"
assert_grep "($want bytes) trimmed (dry run)" "$OUT" "dry run's bytes"
assert_eq "$(sha_of "$q")" "$sum" "the dry run changed the image"
note "dry run: $want bytes in whole ${cluster}-byte clusters, nothing changed"

run_e2trim -n --list "$q"
assert_rc 0 "dry run --list"
cmp -s "$OUT" "$T/plan" || { diff "$OUT" "$T/plan" | head; fail "--list differs from dumpe2fs in whole clusters"; }

alloc0=$(alloc_bytes "$q")
run_e2trim -v "$q"
assert_rc 0 "trim"
assert_grep "($want bytes) trimmed" "$OUT" "reported bytes"
alloc1=$(alloc_bytes "$q")
assert_grep "qcow2 image allocated .* before, .* after" "$OUT" "-v before/after"
drop=$((alloc0 - alloc1))
[ $((drop * 10)) -ge $((want * 9)) ] ||
	fail "qcow2 shrank by $drop bytes, less than 90 % of $want"
note "qcow2 file: $alloc0 -> $alloc1 bytes allocated ($drop freed of $want)"
qemu-img check "$q" >"$T/check" 2>&1 || { cat "$T/check"; fail "qemu-img check"; }

qemu-img convert -O raw "$q" "$T/back.raw" || fail "convert back"
assert_eq "$(used_blocks_digest "$T/back.raw")" "$used0" "used blocks after the trim"
e2fsck -fn "$T/back.raw" >/dev/null 2>&1 || fail "e2fsck -fn after"
# converted back, every trimmed cluster is zeros (and a hole: qemu-img
# convert writes none)
python3 "$(dirname "$0")/../holes.py" "$T/back.raw" "$T/plan" "$cluster" >/dev/null ||
	fail "a trimmed cluster does not read as zeros"

# a second run: everything is a hole already, nothing is sent
run_e2trim -v "$q"
assert_rc 0 "second run"
assert_grep "(0 bytes) trimmed" "$OUT" "second run trims nothing"
[ "$(alloc_bytes "$q")" -le "$alloc1" ] || fail "second run made the qcow2 grow"

# an empty filesystem: its qcow2 must not grow
mkfs "$T/empty.raw" 1G -t ext4
qemu-img convert -O qcow2 "$T/empty.raw" "$T/empty.qcow2" || fail "convert empty"
e0=$(alloc_bytes "$T/empty.qcow2")
run_e2trim -v "$T/empty.qcow2"
assert_rc 0 "empty filesystem"
e1=$(alloc_bytes "$T/empty.qcow2")
[ "$e1" -le "$e0" ] || fail "empty filesystem's qcow2 grew: $e0 -> $e1"
qemu-img check "$T/empty.qcow2" >/dev/null 2>&1 || fail "qemu-img check (empty)"
note "empty 1 GiB ext4: qcow2 $e0 -> $e1 bytes"

# --format raw on a qcow2: its bytes are not an ext filesystem
run_e2trim -n --format raw "$q"
assert_rc 11 "--format raw on a qcow2"
# e2fsck cannot read a qcow2: --fsck shows it the content through nbdfuse
# (a FUSE mount: root here); with -n, e2fsck -n, and nothing changes
sum=$(sha_of "$q")
run_e2trim -n --fsck "$q"
if [ "$(id -u)" = 0 ] && [ -c /dev/fuse ]; then
	assert_rc 0 "--fsck -n on a qcow2"
	assert_grep "/disk: clean" "$ERR" "e2fsck -n's verdict on the content"
else
	left_out "--fsck on a qcow2 (a FUSE mount: root)"
fi
assert_eq "$(sha_of "$q")" "$sum" "--fsck -n changed the qcow2"
# --zero-fill is for devices and raw images: a usage error, nothing changed
sum=$(sha_of "$q")
run_e2trim --zero-fill "$q"
assert_rc 3 "--zero-fill on a qcow2"
assert_eq "$(sha_of "$q")" "$sum" "--zero-fill changed the qcow2"

# another format qemu knows (vmdk): opened, checked and trimmed through
# qemu-nbd, with a warning that qemu's driver keeps the space
qemu-img convert -O vmdk "$raw" "$T/fs.vmdk" || fail "convert to vmdk"
run_e2trim -v "$T/fs.vmdk"
assert_rc 0 "vmdk"
assert_grep "($want bytes) trimmed" "$OUT" "vmdk: the same plan"
assert_grep "qemu's vmdk driver keeps the space" "$ERR" "vmdk's warning"
qemu-img convert -O raw "$T/fs.vmdk" "$T/vmdk.raw" || fail "vmdk back to raw"
assert_eq "$(used_blocks_digest "$T/vmdk.raw")" "$used0" "vmdk: used blocks"
e2fsck -fn "$T/vmdk.raw" >/dev/null 2>&1 || fail "vmdk: e2fsck -fn after"
finish
