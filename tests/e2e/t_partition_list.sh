#!/bin/bash
# --list prints byte offsets in the file or device that was named, and the
# bytes that are discarded after alignment, not the free extents.  An aged
# ext4 in an MBR partition at sector 63 (so its blocks are not on the host
# filesystem's blocks):
#  - e2trim -n --list -p 1 disk.img equals dumpe2fs's free extents shifted
#    by the partition's start (32256 bytes) and trimmed inward to the host
#    filesystem's block; the list adds up to the -v total;
#  - a real trim then turns exactly the listed ranges into holes and
#    changes no other byte of disk.img (its allocated size drops by the
#    listed bytes): the list can be fed to fallocate --punch-hole as is;
#  - through a loop device over the partition (losetup -o), --list is in
#    the loop device's bytes, trimmed inward to its discard granularity;
#    a trim through it keeps every used block and e2fsck -fn clean.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(dirname "$0")/..

img=$T/disk.img
rm -f "$img"; truncate -s 96M "$img"
printf 'label: dos\nstart=63, size=163840, type=83\n' | sfdisk -q "$img" || fail "sfdisk"
off=$((63 * 512))
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,lazy_itable_init=0,offset=$off \
	"$img" 80M || fail "mke2fs at sector 63"
fs="$img?offset=$off"

# age it (files of many sizes, every other one deleted), free space 0x5a
age_part "$img" "$off" 60 13 29
e2fsck -fn "$fs" >/dev/null 2>&1 || fail "e2fsck before"

hbs=$(granularity "$img")
oracle_extents "$fs" >"$T/free"
aligned_extents "$hbs" "$off" <"$T/free" >"$T/want"
[ "$(wc -l <"$T/want")" -ge 10 ] || fail "only $(wc -l <"$T/want") aligned free extents"
# the partition's blocks are off the host's: every extent loses its edges
if cmp -s <(awk -v o="$off" '{print $1 + o, $2}' "$T/free") "$T/want"; then
	fail "alignment changed nothing: the test shows nothing"
fi

run_e2trim -n --list -p 1 "$img"
assert_rc 0 "dry run, --list -p 1"
cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head >&2; fail "--list -p 1 differs from dumpe2fs shifted by $off and aligned to $hbs"; }
cp "$OUT" "$T/listed"
sum=$(awk '{s += $2} END {print s + 0}' "$T/listed")
run_e2trim -n -v -p 1 "$img"
assert_grep "($sum bytes) trimmed (dry run)" "$OUT" "-v total equals the listed bytes"
note "-p 1 at sector 63: $(wc -l <"$T/listed") ranges, $sum bytes, in disk.img's offsets"

# the real trim punches exactly the listed ranges of disk.img
cp --sparse=always "$img" "$T/before.img"
alloc0=$(alloc_bytes "$img")
run_e2trim -v --list -p 1 "$img"
assert_rc 0 "trim, --list -p 1"
grep -v : "$OUT" >"$T/listed.real"
cmp -s "$T/listed.real" "$T/listed" || fail "a real run listed other ranges than the dry run"
python3 "$here/holes.py" "$img" "$T/listed" 1 >/dev/null || fail "a listed range is not a hole"
python3 "$here/same_outside.py" "$T/before.img" "$img" "$T/listed" 1 >/dev/null ||
	fail "bytes outside the listed ranges changed"
assert_eq "$((alloc0 - $(alloc_bytes "$img")))" "$sum" "drop of allocated size"
e2fsck -fn "$fs" >/dev/null 2>&1 || fail "e2fsck after"
note "real trim: exactly the listed ranges are holes, nothing else changed"

# a loop device over the partition: offsets in the device, its granularity
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	cp --sparse=never "$T/before.img" "$img"
	dev=$(loop_attach "$img" -o "$off" --sizelimit $((163840 * 512)))
	g=$(granularity "$dev")
	aligned_extents "$g" <"$T/free" >"$T/want.dev"
	run_e2trim -n --list "$dev"
	assert_rc 0 "dry run, --list on the loop device"
	cmp -s "$OUT" "$T/want.dev" || { diff "$OUT" "$T/want.dev" | head >&2; fail "--list on $dev differs from dumpe2fs aligned to $g"; }
	run_e2trim -v --list "$dev"
	assert_rc 0 "trim through the loop device"
	grep -v : "$OUT" >"$T/listed.dev"
	cmp -s "$T/listed.dev" "$T/want.dev" || fail "a real run on $dev listed other ranges"
	assert_grep "($(awk '{s += $2} END {print s + 0}' "$T/want.dev") bytes) trimmed" "$OUT" \
		"loop device: -v total equals the listed bytes"
	for i in $(seq 1 2 59); do
		debugfs -R "dump f$i $T/out$i" "$dev" >/dev/null 2>&1
		cmp -s "$T/out$i" "$T/blob$i" || fail "f$i changed by the trim through $dev"
	done
	e2fsck -fn "$dev" >/dev/null 2>&1 || fail "e2fsck -fn $dev after"
	note "loop device (granularity $g): $(wc -l <"$T/listed.dev") ranges in its own bytes; files intact"
elif [ "${CI:-}" = true ]; then
	fail "needs root and loop devices under CI"
fi
exit 0
