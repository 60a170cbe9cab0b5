#!/bin/bash
# Ranges and minimum lengths on a real loop device trim exactly the
# planned bytes and nothing outside the range; --zeroout zeroes; --secure
# where unsupported says so with exit 2; an in-use device or image is
# refused with exit 10 by a real (not dry) run, its bytes unchanged.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
here=$(dirname "$0")/..

img="$T/r.img"
mkfs "$img" 128M -t ext4 -g 4096
age "$img" 5
bs=4096
count=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ {print $3}')
fs=$((bs * count))

# A range that starts and ends inside free extents, unaligned, plus -m.
o=$((fs / 3 + 1000)); l=$((fs / 3)); m=65536
oracle_extents "$img" "$m" "$o" "$l" >"$T/plan"
oracle_extents "$img" 0 >"$T/all"
want=$(awk '{s += $2} END {print s + 0}' "$T/plan")
[ "$want" -gt 0 ] || fail "empty plan for the range"
used=$(used_blocks_digest "$img")
cp --sparse=always "$img" "$T/before.img"
dev=$(loop_attach "$img")
run_e2trim -v --list -o "$o" -l "$l" -m "$m" "$dev"
assert_rc 0 "ranged trim"
grep -v : "$OUT" >"$T/listed"
list_oracle "$dev" "$img" "$m" "$o" "$l" >"$T/plan.list"
cmp -s "$T/listed" "$T/plan.list" || fail "ranged trim listed other extents than dumpe2fs gives"
assert_grep "($want bytes) trimmed" "$OUT" "ranged trim bytes"
assert_eq "$(used_blocks_digest "$img")" "$used" "used blocks after ranged trim"
python3 "$here/holes.py" "$img" "$T/plan" "$bs" >/dev/null || fail "range not punched"
python3 "$here/same_outside.py" "$T/before.img" "$img" "$T/plan" "$bs" >/dev/null ||
	fail "bytes outside the planned extents changed"
note "ranged trim: $want bytes, exactly the plan"

# --zeroout on the device: the rest of the free space reads as zeros,
# and it was zeroed out, not discarded (which reads as zeros too): the
# loop device counts no discard request (/sys/block/loopN/stat field 12),
# and its backing file keeps its allocation (BLKZEROOUT asks for no
# unmapping: the loop driver zeroes the range in place, where a discard
# punches it)
sync
a0=$(alloc_bytes "$img")
d0=$(awk '{print $12}' "/sys/block/$(basename "$dev")/stat")
run_e2trim -v -z "$dev"
assert_rc 0 "zeroout"
sync
assert_eq "$(awk '{print $12}' "/sys/block/$(basename "$dev")/stat")" "$d0" "zeroout: discard requests the loop device saw"
a1=$(alloc_bytes "$img")
[ "$a1" -ge "$a0" ] || fail "zeroout: the backing file lost $((a0 - a1)) allocated bytes (discarded?)"
python3 - "$img" "$T/all" <<'PY' || fail "zeroout left non-zero free bytes"
import sys
with open(sys.argv[1], "rb") as f:
    for line in open(sys.argv[2]):
        s, n = map(int, line.split()); f.seek(s); d = f.read(n)
        if d.count(0) != len(d): sys.exit(1)
PY
assert_eq "$(used_blocks_digest "$img")" "$used" "used blocks after zeroout"
e2fsck -fn "$dev" >/dev/null 2>&1 || fail "e2fsck after zeroout"

# --zeroout on the image file itself: FALLOC_FL_ZERO_RANGE, which keeps
# the file's allocation (the zeroed blocks become unwritten extents); a
# punched hole would read as zeros too, but give the blocks back.  A host
# filesystem without it (tmpfs) makes the first request fail: exit 2,
# "cannot zero out", and nothing changed.
cp --sparse=never "$img" "$T/z.img"
sync
a0=$(alloc_bytes "$T/z.img")
: >"$T/probe"
if fallocate -z -o 0 -l 4096 "$T/probe" 2>/dev/null; then
	run_e2trim -v -z "$T/z.img"
	assert_rc 0 "zeroout on an image file"
	sync
	a1=$(alloc_bytes "$T/z.img")
	[ "$a1" -ge "$a0" ] || fail "zeroout on an image file: it lost $((a0 - a1)) allocated bytes (punched?)"
	assert_eq "$(used_blocks_digest "$T/z.img")" "$used" "used blocks after zeroout (image file)"
else
	sum=$(sha_of "$T/z.img")
	run_e2trim -v -z "$T/z.img"
	assert_rc 2 "zeroout on an image file where the host has no FALLOC_FL_ZERO_RANGE"
	assert_grep "cannot zero out" "$ERR" "zeroout on an image file: the message"
	assert_eq "$(sha_of "$T/z.img")" "$sum" "zeroout refused: the image after"
	note "this host filesystem ($(stat -f -c %T "$T")) cannot zero a range: refused, unchanged"
fi
rm -f "$T/z.img" "$T/probe"

# --secure: loop devices cannot; exit 2 and nothing done
if [ "$(cat /sys/block/"$(basename "$dev")"/queue/discard_granularity)" != 0 ]; then
	run_e2trim -s "$dev"
	assert_rc 2 "--secure on a loop device"
	assert_grep "not support" "$ERR" "--secure message"
fi
run_e2trim -s "$img"
assert_rc 2 "--secure on an image file"

# In use: mounted loop device, image behind it, O_EXCL holder.  Real runs.
sum=$(sha_of "$img")
mkdir -p "$T/mnt"
mount -o ro "$dev" "$T/mnt" || fail "mount"
MOUNTS+=("$T/mnt")
run_e2trim "$dev"
assert_rc 10 "mounted device"
assert_grep "unmount it first" "$ERR" "mounted device message"
run_e2trim "$img"
assert_rc 10 "image of a mounted loop device"
umount "$T/mnt"; MOUNTS=()
hold_excl "$dev"
run_e2trim "$dev"
rc_dev=$RC
run_e2trim "$img"
rc_img=$RC
release_excl
[ "$rc_dev" = 10 ] || fail "device held O_EXCL elsewhere: exit $rc_dev"
[ "$rc_img" = 10 ] || fail "image whose loop device is held O_EXCL: exit $rc_img"
assert_eq "$(sha_of "$img")" "$sum" "image changed by refused runs"
exit 0
