#!/bin/bash
# A whole-disk image with a GPT: e2trim --partition 2 trims the ext4
# filesystem in partition 2, and nothing else in the file changes — not
# the partition table, not partition 1, not a used block.  No root, no
# loop device: this is what image pipelines run.  Then, as root, the same
# image attached with partitions (losetup -P) and one mounted is refused.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(dirname "$0")/..

# partition 2: an aged ext4, free space 0x5a; partition 1: bytes that
# must survive
img="$T/disk.img"
gpt_disk "$img"
fs="$img?offset=$off"

# the plan, from dumpe2fs alone, in filesystem bytes and in file bytes
oracle_extents "$fs" >"$T/plan"
awk -v o=$off '{print $1 + o, $2}' "$T/plan" >"$T/plan.file"
hbs=$(stat -f -c %S "$img")
want=$(awk -v g="$hbs" '{ a = int(($1 + g - 1) / g) * g; b = int(($1 + $2) / g) * g;
	if (b > a) s += b - a } END {print s + 0}' "$T/plan.file")

# --list: in bytes of disk.img, trimmed inward to the host's blocks
run_e2trim -n --list -p 2 "$img"
assert_rc 0 "dry run on partition 2"
aligned_extents "$hbs" "$off" <"$T/plan" >"$T/plan.list"
cmp -s "$OUT" "$T/plan.list" || { diff "$OUT" "$T/plan.list" | head; fail "plan differs from dumpe2fs"; }
assert_eq "$(awk '{s += $2} END {print s + 0}' "$OUT")" "$want" "--list adds up to the bytes to trim"

run_e2trim -p 3 "$img"
assert_rc 11 "a partition that does not exist"
assert_grep "no partition 3 (the gpt table has: 1, 2)" "$ERR" "missing partition message"
run_e2trim -p 1 "$img"
assert_rc 11 "partition 1 holds no filesystem"

cp --sparse=always "$img" "$T/before.img"
alloc0=$(alloc_bytes "$img")
run_e2trim -v -p 2 "$img"
assert_rc 0 "trim partition 2"
assert_grep "($want bytes) trimmed" "$OUT" "reported bytes"
python3 "$here/same_outside.py" "$T/before.img" "$img" "$T/plan.file" "$hbs" >/dev/null ||
	fail "bytes outside the planned extents changed (partition table, partition 1 or used blocks)"
python3 "$here/holes.py" "$img" "$T/plan.file" "$hbs" >/dev/null || fail "plan not punched"
assert_eq "$((alloc0 - $(alloc_bytes "$img")))" "$want" "drop of allocated size"
e2fsck -fn "$fs" >/dev/null 2>&1 || fail "e2fsck after"
note "partition 2: $want bytes trimmed, everything else identical"

# In use: partition 2 attached on its own (losetup -o, as image scripts
# do; this kernel makes no partitions for loop devices) and mounted
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	dev=$(losetup -f --show -o $off --sizelimit $((196608 * 512)) "$img")
	LOOPS+=("$dev")
	mkdir -p "$T/mnt"
	mount -o ro "$dev" "$T/mnt" || fail "mount $dev"
	MOUNTS+=("$T/mnt")
	sum=$(sha_of "$img")
	run_e2trim -p 2 "$img"
	assert_rc 10 "image whose partition is mounted through a loop device"
	run_e2trim -n -p 2 "$img"
	assert_rc 10 "dry run on it"
	assert_eq "$(sha_of "$img")" "$sum" "image changed by a refused run"
elif [ "${CI:-}" = true ]; then
	fail "needs root and loop devices under CI"
fi
exit 0
