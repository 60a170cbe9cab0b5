#!/bin/bash
# A partition table entry is a claim, not a fact.  Whole-disk images whose
# entries lie (made with sfdisk, then edited by tests/parttable.py, since
# sfdisk refuses to write them) and an ext4 made on each lying entry, so
# that the filesystem's free space lies on its neighbour's bytes:
#  - MBR and GPT, an entry running into the next partition and one
#    starting inside the previous, a GPT entry over the table's own
#    sectors (libblkid hides that one; the kernel does not), an ext4 made
#    on an MBR extended container that holds logical partitions, and an
#    ext4 at offset 0 under a stray table: -p on any partition (and the
#    image without -p) is refused with exit 24, the message names the
#    entries, their byte ranges and the fix, and not one byte of the
#    image changes (sha256);
#  - a logical partition inside its container is fine (its --list is
#    dumpe2fs's);
#  - a missing partition number lists the numbers there; a GPT whose
#    primary header or entry array is damaged is read from its backup
#    with a warning, and refused when the backup is damaged too;
#  - -p with a loop device attached without partition scanning says to
#    give the image file (or use losetup -P).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
pt() { python3 "$here/parttable.py" "$@" || fail "parttable.py $*"; }

# disk NAME SFDISK-SCRIPT: a 64 MiB image with that table, every sector of
# it 0x61 first, so that a partition's bytes are data, not holes
disk() {
	img=$T/$1.img
	rm -f "$img"
	head -c 64M /dev/zero | tr '\0' '\141' >"$img"
	printf '%b' "$2" | sfdisk -q --wipe never "$img" >/dev/null || fail "sfdisk $1"
}
# ext4_at SECTOR SECTORS: an ext4 filesystem there, as big as the entry says
ext4_at() {
	mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,lazy_itable_init=0,offset=$(($1 * 512)) \
		"$img" $(($2 / 2))k || fail "mke2fs at sector $1"
}
# frees_over FS_SECTOR OTHER_START OTHER_SECTORS: dumpe2fs says the
# filesystem at FS_SECTOR has free blocks on the other partition's bytes
# (what a trim through the lying entry would discard)
frees_over() {
	local o=$(($1 * 512)) a=$(($2 * 512)) b=$((($2 + $3) * 512))
	oracle_extents "$img?offset=$o" |
		awk -v o="$o" -v a="$a" -v b="$b" '$1 + o < b && a < $1 + o + $2 {f = 1} END {exit !f}' ||
		fail "$img: no free space of the filesystem at sector $1 lies on the other partition"
}
# refused WHAT PARTNO PATTERN...: -p PARTNO is refused with 24 in a dry run
# and a real one, naming each PATTERN and the fix; the image is unchanged
refused() {
	local what=$1 partno=$2 sum p opts; shift 2
	sum=$(sha256sum "$img" | cut -d' ' -f1)
	for opts in "-n -v" "-v --list"; do
		# shellcheck disable=SC2086
		run_e2trim $opts -p "$partno" "$img"
		assert_rc 24 "$what: e2trim $opts -p $partno"
		for p in "$@" "${FIX_WORDS:-sfdisk --verify and fdisk -l}"; do
			assert_grep "$p" "$ERR" "$what: message"
		done
		[ ! -s "$OUT" ] || { cat "$OUT" >&2; fail "$what: printed a plan"; }
	done
	assert_eq "$(sha256sum "$img" | cut -d' ' -f1)" "$sum" "$what: image sha256"
	note "$what, -p $partno: exit 24: $(sed "s/.*cannot trust (//; s/); check it.*//" "$ERR")"
}

# MBR: partition 1 (at sector 63) claims 20000 sectors of partition 2
disk mbr-fwd 'label: dos\nstart=63, size=40000, type=83\nstart=40960, size=60000, type=83\n'
pt mbr-set "$img" 1 63 60000
ext4_at 63 60000
frees_over 63 40960 60000
refused "MBR, entry 1 runs into 2" 1 "partition 1 (bytes 32256-30752255) overlaps partition 2 (bytes 20971520-51691519)"
refused "MBR, entry 1 runs into 2" 2 "partition 1 (bytes 32256-30752255) overlaps partition 2"

# MBR: partition 2 starts inside partition 1
disk mbr-back 'label: dos\nstart=63, size=40000, type=83\nstart=40960, size=60000, type=83\n'
pt mbr-set "$img" 2 20000 80960
ext4_at 20000 80960
frees_over 20000 63 40000
refused "MBR, entry 2 starts inside 1" 2 "partition 1 (bytes 32256-20512255) overlaps partition 2 (bytes 10240000-51691519)"
refused "MBR, entry 2 starts inside 1" 1 "overlaps partition 2"

# GPT, both ways
gpt='label: gpt\nstart=2048, size=40000\nstart=43008, size=40000\n'
disk gpt-fwd "$gpt"
pt gpt-set "$img" 1 2048 70047
ext4_at 2048 68000
frees_over 2048 43008 40000
refused "GPT, entry 1 runs into 2" 1 "partition 1 (bytes 1048576-35864575) overlaps partition 2 (bytes 22020096-42500095)"
disk gpt-back "$gpt"
pt gpt-set "$img" 2 30000 83007
ext4_at 30000 53008
frees_over 30000 2048 40000
refused "GPT, entry 2 starts inside 1" 2 "partition 1 (bytes 1048576-21528575) overlaps partition 2 (bytes 15360000-42500095)"

# GPT: entry 2 over the entry array (LBAs 2-33); libblkid drops such an
# entry, the kernel makes /dev/sdX2 of it
disk gpt-table "$gpt"
ext4_at 2048 40000
pt gpt-set "$img" 2 20 2047
refused "GPT, entry 2 over the table" 1 "partition 2 (bytes 10240-1048575) overlaps the partition table itself (bytes 0-1048575)"

# An ext4 made on an MBR extended container (partition 2), over its
# logical partitions 5 and 6; logical 6 holds an ext4 of its own
# (mke2fs zaps the container's first sector, the first EBR, and so the
# logical partitions; writing the table again brings them back, and the
# ext4 does not use that sector)
ext='label: dos\nstart=63, size=20000, type=83\nstart=20480, size=90000, type=5\nstart=22528, size=30000, type=83\nstart=55296, size=30000, type=83\n'
disk extended "$ext"
ext4_at 20480 90000
printf '%b' "$ext" | sfdisk -q --wipe never "$img" >/dev/null 2>&1 || fail "sfdisk extended again"
frees_over 20480 55296 30000
ext4_at 55296 30000
# the number is wrong, not the table: told to name a logical partition
FIX_WORDS="give -p with one of its logical partitions (5, 6) instead" \
	refused "ext4 on an extended container" 2 "partition 2 is an MBR extended container, not a filesystem; its logical partitions: 5, 6"
run_e2trim -n --list -p 6 "$img"
assert_rc 0 "logical partition 6, inside its container"
oracle_extents "$img?offset=$((55296 * 512))" | aligned_extents "$(granularity "$img")" $((55296 * 512)) >"$T/want"
cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head >&2; fail "logical partition 6: --list differs from dumpe2fs"; }
note "logical partition 6 inside its container: $(wc -l <"$OUT") extents as dumpe2fs"

# an ext4 at offset 0 under a stray table: -p is refused, and so is the
# whole filesystem without -p
img=$T/stray.img
rm -f "$img"; truncate -s 64M "$img"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard "$img" || fail "mke2fs stray"
printf 'label: dos\nstart=2048, size=40000, type=83\n' | sfdisk -q --wipe never "$img" >/dev/null ||
	fail "sfdisk stray"
refused "ext4 at offset 0 under a stray MBR" 1 "an ext4 filesystem starts at byte 0, under the dos table"
# without -p too (issue 33): which of the two is stale is not e2trim's guess
sum=$(sha_of "$img")
run_e2trim -v "$img"
assert_rc 24 "the filesystem at offset 0 beside a table, without -p"
assert_grep "give -p N to trim a partition, or erase the stale one with wipefs" "$ERR" \
	"the filesystem at offset 0 beside a table: the fix"
assert_eq "$(sha_of "$img")" "$sum" "the filesystem at offset 0 beside a table: sha256"

# a table whose only partition is number 2
img=$T/only2.img
rm -f "$img"; truncate -s 64M "$img"
printf 'label: dos\n%s2 : start=2048, size=40000, type=83\n' "$img" | sfdisk -q "$img" >/dev/null ||
	fail "sfdisk only2"
run_e2trim -n -p 1 "$img"
assert_rc 11 "no partition 1"
assert_grep "no partition 1 (the dos table has: 2)" "$ERR" "missing partition lists the numbers"

# GPT with a damaged primary: the backup is whole, so a warning and on
disk gpt-primary "$gpt"
ext4_at 2048 40000
cp "$img" "$T/gpt-entries.img"
cp "$img" "$T/gpt-both.img"
pt gpt-break-primary "$img"
run_e2trim -n --list -p 1 "$img"
assert_rc 0 "GPT with a damaged primary header"
assert_grep "warning: the primary GPT header is damaged (its header CRC does not match); going by the backup at LBA 131071" \
	"$ERR" "damaged primary: warning"
oracle_extents "$img?offset=1048576" | aligned_extents "$(granularity "$img")" 1048576 >"$T/want"
cmp -s "$OUT" "$T/want" || fail "damaged primary: --list differs from dumpe2fs"
img=$T/gpt-entries.img
pt gpt-break-primary-entries "$img"
run_e2trim -n -p 1 "$img"
assert_rc 0 "GPT with a damaged primary entry array"
assert_grep "primary GPT header is damaged (its entry array's CRC does not match)" "$ERR" \
	"damaged primary entries: warning"
img=$T/gpt-both.img
pt gpt-break-both "$img"
refused "GPT with both headers damaged" 1 "the primary GPT header is damaged (its header CRC does not match) and so is the backup"
note "GPT: a damaged primary header or entry array warns and goes by the backup"

# -p with a loop device: the kernel's partition device, else the image
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	img=$T/gpt-primary.img
	dev=$(loop_attach "$img")
	run_e2trim -n -p 1 "$dev"
	assert_rc 3 "-p with a loop device without partition scanning"
	assert_grep "give the image itself (e2trim -p 1 $img), or attach it with losetup -P" "$ERR" \
		"loop device without partition scanning: message"
	losetup -d "$dev"
	dev=$(loop_attach "$img" -P)
	run_e2trim -n -p 1 "$dev"
	assert_rc 3 "-p with a loop device attached with -P"
	# one message, the one sysfs calls for: whether the kernel made the
	# partition device (it may not, for a loop device in a container)
	sys=/sys/class/block/$(basename "$dev")
	assert_eq "$(cat "$sys/loop/partscan")" 1 "losetup -P: partition scanning on"
	if [ -e "$sys/$(basename "$dev")p1/partition" ]; then
		want="give the partition's own device, ${dev}p1, instead of --partition"
	else
		want="a loop device without a partition 1 device (the kernel made none): give the image itself (e2trim -p 1 $img)"
	fi
	grep -qF -- "$want" "$ERR" || { cat "$ERR" >&2; fail "loop device with -P: not '$want'"; }
	note "-p with a loop device: $(sed 's/^[^:]*: [^:]*: //' "$ERR")"
elif [ "${CI:-}" = true ]; then
	fail "needs root and loop devices under CI"
fi
exit 0
