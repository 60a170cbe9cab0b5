#!/bin/bash
# A filesystem 1000 bytes into an image, trimmed through a loop device
# over the image ("/dev/loopN?offset=1000"), as the same file with
# "?offset=1000" is: the plan is dumpe2fs's, inward to whole host blocks
# counted from the device's start (not the filesystem's), the real run
# exits 0 (it used to fail with "Invalid argument": requests were aligned
# as if the filesystem started on a block), reports exactly what the
# backing file gives back, and every file survives (e2fsck -fn, debugfs
# cat).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

img=$T/off.img
off=1000
truncate -s 64M "$img"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$off "$img" 32M ||
	fail "mke2fs at byte $off"
age_part "$img" $off 30 7 41
fs="$img?offset=$off"

dev=$(loop_attach "$img")
g=$(granularity "$dev")
oracle_extents "$fs" | aligned_extents "$g" $off >"$T/plan"
want=$(awk '{s += $2} END {print s + 0}' "$T/plan")
[ "$want" -gt $((1 << 20)) ] || fail "setup: only $want bytes to trim"
# every block that is trimmed is a whole host block of the file
awk -v g="$g" '$1 % g || $2 % g {exit 1}' "$T/plan" || fail "plan not on host blocks"

run_e2trim -n --list "$dev?offset=$off"
assert_rc 0 "$dev?offset=$off --list"
cmp -s "$OUT" "$T/plan" || { diff "$OUT" "$T/plan" | head; fail "plan differs from dumpe2fs"; }

alloc0=$(alloc_bytes "$img")
run_e2trim -v "$dev?offset=$off"
assert_rc 0 "$dev?offset=$off"
assert_grep "($want bytes) trimmed" "$OUT" "bytes reported"
losetup -d "$dev"
assert_eq "$((alloc0 - $(alloc_bytes "$img")))" "$want" "the backing file gave back what was reported"
e2fsck -fn "$fs" >/dev/null 2>&1 || fail "e2fsck -fn after"
for ((i = 1; i < 30; i += 2)); do
	assert_eq "$(debugfs -R "cat f$i" "$fs" 2>/dev/null | sha256sum | cut -d' ' -f1)" \
		"$(sha256sum <"$T/blob$i" | cut -d' ' -f1)" "file f$i"
done
note "$dev?offset=$off: $want bytes trimmed in whole $g-byte host blocks, files intact"
exit 0
