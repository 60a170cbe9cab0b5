#!/bin/bash
# The dry-run plan of every common layout (--list) equals the free extents
# that dumpe2fs lists, merged across block groups (and widened to whole
# clusters on bigalloc), then trimmed inward to the discard granularity
# (an image file's host block, a loop device's queue), with and without a
# range and a minimum length.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

check_layout() {	# name size mke2fs-options...
	local name=$1 size=$2; shift 2
	local img="$T/$name.img"
	mkfs "$img" "$size" "$@"
	age "$img" 7
	local bs count fs_bytes
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block size:/ {print $3}')
	count=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ {print $3}')
	fs_bytes=$((bs * count))

	run_e2trim -n --list "$img"
	assert_rc 0 "$name: dry run"
	oracle_extents "$img" >"$T/free"
	list_oracle "$img" "$img" >"$T/want"
	[ -s "$T/want" ] || fail "$name: oracle found no free space"
	cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head; fail "$name: plan differs from dumpe2fs"; }
	note "$name: $(wc -l <"$T/want") extents match dumpe2fs"

	# a minimum length: extents of exactly minlen stay, one byte more drops them
	local m
	m=$(awk 'NR == 2 {print $2}' "$T/free")
	for mm in "$m" $((m + 1)); do
		run_e2trim -n --list -m "$mm" "$img"
		assert_rc 0 "$name: -m $mm"
		list_oracle "$img" "$img" "$mm" >"$T/want.m"
		cmp -s "$OUT" "$T/want.m" || fail "$name: -m $mm differs from dumpe2fs"
	done

	# ranges that start and end inside extents, unaligned by one byte
	local o l o1 l1
	o=$(( fs_bytes / 3 + 1 )); l=$(( fs_bytes / 4 - 1 ))
	for r in "$o $l" "$((o - 1)) $((l + 1))" "0 $fs_bytes" "$bs $bs" "$o 99999999999999"; do
		read -r o1 l1 <<<"$r"
		set -- "$o1" "$l1"
		run_e2trim -n --list -o "$1" -l "$2" "$img"
		assert_rc 0 "$name: -o $1 -l $2"
		list_oracle "$img" "$img" 0 "$1" "$2" >"$T/want.r"
		cmp -s "$OUT" "$T/want.r" || { diff "$OUT" "$T/want.r" | head; fail "$name: -o $1 -l $2 differs from dumpe2fs"; }
	done

	# the -v total is the sum of the extents, each trimmed inward to the
	# host filesystem's block (the image is fully allocated by age)
	run_e2trim -n -v "$img"
	local sum hbs
	hbs=$(stat -f -c %S "$img")
	sum=$(awk -v g="$hbs" '{ a = int(($1 + g - 1) / g) * g; b = int(($1 + $2) / g) * g;
		if (b > a) s += b - a } END {print s + 0}' "$T/free")
	assert_grep "($sum bytes) trimmed (dry run)" "$OUT" "$name: -v total"
	assert_eq "$(awk '{s += $2} END {print s + 0}' "$T/want")" "$sum" "$name: --list adds up to the -v total"
}

check_layout ext2-1k 64M -t ext2 -b 1024
check_layout ext3 96M -t ext3
check_layout ext4 256M -t ext4
check_layout ext4-noflex 128M -t ext4 -O ^flex_bg
check_layout ext4-bigalloc16k 256M -t ext4 -b 1024 -O bigalloc -C 16384
check_layout ext4-bigalloc64k 512M -t ext4 -O bigalloc -C 65536

# Through a loop device the bitmaps are read in direct-I/O batches.  With
# 4 KiB logical sectors a 1 KiB-block filesystem cannot be read that way,
# and every read falls back to libext2fs.  Both must plan what dumpe2fs
# lists.
need_root
for ss in 512 4096; do
	for name in ext2-1k ext4 ext4-bigalloc16k; do
		dev=$(loop_attach "$T/$name.img" --sector-size "$ss")
		run_e2trim -n --list "$dev"
		assert_rc 0 "$name on a loop device with $ss-byte sectors"
		list_oracle "$dev" "$T/$name.img" >"$T/want"
		cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head;
			fail "$name, $ss-byte sectors: plan differs from dumpe2fs"; }
		losetup -d "$dev"
	done
	note "loop devices with $ss-byte sectors: plans match dumpe2fs"
done
exit 0
