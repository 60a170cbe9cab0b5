#!/bin/bash
# MBR logical partitions inside a VM image.  A whole-disk image with a
# primary ext4 (1) and an extended container (2) holding three logical
# ext4 partitions (5, 6, 7), each aged, converted to qcow2:
#  - -p all --list through NBD is dumpe2fs's plan of all four partitions
#    (to whole clusters), as the raw image's is (to whole host blocks);
#  - -p 6 is found through NBD;
#  - -p all trims all four in the qcow2; converted back, nothing outside
#    the planned clusters changed, each planned cluster reads as zeros,
#    e2fsck -fn is clean in each partition and every file's bytes are
#    the ones written (debugfs cat);
#  - logical 5's EBR made to run 10 MiB into logical 6 (an ext4 made on
#    the lying entry, so its free space lies on 6's files): refused with
#    24 in the raw image and in the qcow2 alike, the qcow2's sha256
#    unchanged.
# The table used to be read from a copy of the image's edges, which holds
# only the first EBR: -p all trimmed 1 alone, -p 6 said there was no
# partition 6, and the overlapping pair was trimmed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

cluster=65536
parts=(1 5 6 7)
starts=(2048 45056 88064 131072)
img="$T/disk.raw"
truncate -s 160M "$img"
printf 'label: dos\nstart=2048, size=40960, type=83\nstart=43008, size=284672, type=5\nstart=45056, size=40960, type=83\nstart=88064, size=40960, type=83\nstart=131072, size=40960, type=83\n' |
	sfdisk -q "$img" || fail "sfdisk"
for i in 0 1 2 3; do
	o=$((starts[i] * 512))
	mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$o "$img" 20M ||
		fail "mke2fs in partition ${parts[i]}"
	age_part "$img" "$o" 24 5 $((40 + i))
	# the files that are left, by the bytes written
	for ((f = 1; f < 24; f += 2)); do
		echo "${parts[i]} $o f$f $(sha256sum <"$T/blob$f" | cut -d' ' -f1)"
	done >>"$T/files"
done

# plan WIDTH: dumpe2fs's free extents of all four, in bytes of the disk,
# inward to whole WIDTH-byte units of the disk
plan() {
	local i
	for i in 0 1 2 3; do
		oracle_extents "$img?offset=$((starts[i] * 512))" |
			aligned_extents "$1" $((starts[i] * 512))
	done
}

# files_intact RAW WHAT: every file left in each partition reads back
# with its bytes, and e2fsck -fn is clean in each
files_intact() {
	local raw=$1 what=$2 p o f sum
	while read -r p o f sum; do
		assert_eq "$(debugfs -R "cat $f" "$raw?offset=$o" 2>/dev/null | sha256sum | cut -d' ' -f1)" \
			"$sum" "$what: partition $p file $f"
	done <"$T/files"
	for o in "${starts[@]}"; do
		e2fsck -fn "$raw?offset=$((o * 512))" >/dev/null 2>&1 || fail "$what: e2fsck at sector $o"
	done
}

q="$T/disk.qcow2"
qemu-img convert -O qcow2 "$img" "$q" || fail "qemu-img convert"
cp "$q" "$T/orig.qcow2"

# the raw image: all four, to whole host blocks
run_e2trim -n --list -p all "$img"
assert_rc 0 "raw -p all --list"
plan "$(stat -f -c %S "$img")" >"$T/plan.raw"
# several targets: the partition first on each line, then the range
awk '{print $2, $3}' "$OUT" >"$T/ranges"
cmp -s "$T/ranges" "$T/plan.raw" || { diff "$T/ranges" "$T/plan.raw" | head; fail "raw: plan differs from dumpe2fs"; }
assert_eq "$(awk '{print $1}' "$OUT" | uniq | sed 's/.*\\x20//' | tr '\n' ' ')" \
	"$(printf '%s ' "${parts[@]}")" "raw: each range names its partition"

# the qcow2: the same four, to whole clusters
plan $cluster >"$T/plan"
want=$(awk '{s += $2} END {print s + 0}' "$T/plan")
run_e2trim -n --list -p all "$q"
assert_rc 0 "qcow2 -p all --list"
awk '{print $2, $3}' "$OUT" >"$T/ranges"
cmp -s "$T/ranges" "$T/plan" || { diff "$T/ranges" "$T/plan" | head; fail "qcow2: plan differs from dumpe2fs"; }
run_e2trim -n -v -p all "$q"
for p in "${parts[@]}"; do
	assert_grep "partition $p: " "$OUT" "qcow2 -p all names partition $p"
done

# -p 6 through NBD
run_e2trim -n --list -p 6 "$q"
assert_rc 0 "qcow2 -p 6"
oracle_extents "$img?offset=$((88064 * 512))" | aligned_extents $cluster $((88064 * 512)) >"$T/plan6"
cmp -s "$OUT" "$T/plan6" || { diff "$OUT" "$T/plan6" | head; fail "qcow2 -p 6: plan differs"; }

# the real thing
alloc0=$(alloc_bytes "$q")
run_e2trim -v -p all "$q"
assert_rc 0 "qcow2 -p all"
got=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$OUT" | awk '{s += $1} END {print s + 0}')
assert_eq "$got" "$want" "bytes reported over the four partitions"
alloc1=$(alloc_bytes "$q")
[ $(( (alloc0 - alloc1) * 10 )) -ge $((want * 9)) ] ||
	fail "qcow2 shrank by $((alloc0 - alloc1)), less than 90 % of $want"
qemu-img check "$q" >/dev/null 2>&1 || fail "qemu-img check"
qemu-img convert -O raw "$q" "$T/back.raw" || fail "convert back"
python3 "$here/same_outside.py" "$img" "$T/back.raw" "$T/plan" $cluster >/dev/null ||
	fail "bytes outside the planned clusters changed"
python3 "$here/holes.py" "$T/back.raw" "$T/plan" $cluster >/dev/null ||
	fail "a planned cluster is not zeros"
files_intact "$T/back.raw" "after -p all"
note "qcow2 -p all: partitions ${parts[*]}, $want bytes trimmed, allocated $alloc0 -> $alloc1"

# logical 5 runs 10 MiB into logical 6 (its EBR at the container's start
# says so), and an ext4 made on the lying entry frees 6's bytes
cp --sparse=always "$img" "$T/bad.raw"
img="$T/bad.raw"
python3 "$here/parttable.py" ebr-set "$img" 43008 1 2048 $((40960 + 22528)) || fail "ebr-set"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$((45056 * 512)) "$img" \
	$(((40960 + 22528) / 2))k || fail "mke2fs on the lying entry"
oracle_extents "$img?offset=$((45056 * 512))" |
	awk -v o=$((45056 * 512)) -v a=$((88064 * 512)) '$1 + o + $2 > a {f = 1} END {exit !f}' ||
	fail "no free space of logical 5 lies on logical 6"
qemu-img convert -O qcow2 "$img" "$T/bad.qcow2" || fail "convert bad"
for f in "$img" "$T/bad.qcow2"; do
	sum=$(sha256sum "$f" | cut -d' ' -f1)
	for p in all 5 6; do
		run_e2trim -v -p $p "$f"
		assert_rc 24 "${f##*/}: -p $p with logical 5 over logical 6"
		assert_grep "logical partition 5 (bytes 23068672-55574527) overlaps" "$ERR" \
			"${f##*/} -p $p: message names logical 5"
	done
	assert_eq "$(sha256sum "$f" | cut -d' ' -f1)" "$sum" "${f##*/}: sha256 after the refusals"
done
note "logical 5 over logical 6: refused with 24 in raw and qcow2, both unchanged"
exit 0
