#!/bin/bash
# A real trim, through a loop device and directly on the image file, on
# aged ext2 (1 KiB blocks), ext3, ext4 and ext4 bigalloc images whose free
# blocks all hold 0x5a bytes.  Oracles independent of e2trim: dumpe2fs for
# what is free, md5 of every used block, SEEK_DATA and the bytes for the
# holes, the backing file's allocated size, the loop device's discard
# counters, and e2fsck -fn.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
here=$(dirname "$0")/..

disc_requests() { awk '{print $12}' "/sys/block/$(basename "$1")/stat"; }

# trim_and_check NAME TARGET_KIND(dev|file) mke2fs-args...
trim_and_check() {
	local name=$1 kind=$2; shift 2
	local img="$T/$name.img" hbs used_before alloc_before want_bytes dev
	mkfs "$img" 128M "$@"
	age "$img" 11
	hbs=$(stat -f -c %S "$img")
	used_before=$(used_blocks_digest "$img")
	oracle_extents "$img" "$hbs" >"$T/plan"
	# each extent trimmed inward to the host block: what must be freed
	want_bytes=$(awk -v g="$hbs" '{ a = int(($1 + g - 1) / g) * g;
		b = int(($1 + $2) / g) * g; if (b > a) s += b - a } END {print s + 0}' "$T/plan")
	[ "$want_bytes" -gt 0 ] || fail "$name: nothing to trim in the test image"
	alloc_before=$(alloc_bytes "$img")
	cp --sparse=always "$img" "$T/before.img"

	if [ "$kind" = dev ]; then
		dev=$(loop_attach "$img")
		local d0; d0=$(disc_requests "$dev")
		run_e2trim -v "$dev"
		assert_rc 0 "$name ($kind): trim"
		local req; req=$(grep -o '[0-9]* requests\?' "$OUT" | cut -d' ' -f1)
		local d1; d1=$(disc_requests "$dev")
		losetup -d "$dev"
		assert_eq "$((d1 - d0))" "$req" "$name: loop discard counter vs reported requests"
	else
		run_e2trim -v "$img"
		assert_rc 0 "$name ($kind): trim"
	fi
	assert_grep "($want_bytes bytes) trimmed" "$OUT" "$name ($kind): reported bytes"

	assert_eq "$(used_blocks_digest "$img")" "$used_before" "$name ($kind): used blocks changed"
	python3 "$here/same_outside.py" "$T/before.img" "$img" "$T/plan" "$hbs" >/dev/null ||
		fail "$name ($kind): bytes outside the planned extents changed"
	local holes; holes=$(python3 "$here/holes.py" "$img" "$T/plan" "$hbs") ||
		fail "$name ($kind): $holes"
	assert_eq "$holes" "$want_bytes" "$name ($kind): bytes verified as holes"
	local drop=$((alloc_before - $(alloc_bytes "$img")))
	# st_blocks also counts the host filesystem's own extent-tree blocks
	# for the image, which punching can add or free: allow 64 KiB of that
	local diff=$((drop - want_bytes))
	[ "${diff#-}" -le 65536 ] ||
		fail "$name ($kind): allocated size dropped $drop bytes, trimmed $want_bytes"
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$name ($kind): e2fsck -fn not clean"; }

	# a second run finds everything sparse already and punches nothing
	if [ "$kind" = file ]; then
		run_e2trim -v "$img"
		assert_rc 0 "$name: second run"
		assert_grep "(0 bytes) trimmed" "$OUT" "$name: second run trims nothing"
		assert_grep ", 0 requests" "$OUT" "$name: second run issues nothing"
		assert_grep "already sparse" "$OUT" "$name: second run reports sparse"
	fi
	note "$name ($kind): $want_bytes bytes trimmed, used blocks identical"
}

# under a checker (E2E_SAMPLE) each layout once, through the device or
# the file in turn (ext2-1k and ext4 by device, ext3 and bigalloc by
# file): the plain pass runs every layout both ways
n=0
sampled() {
	n=$((n + 1))
	[ -z "$E2E_SAMPLE" ] || [ $(( ((n - 1) % 4 + (n - 1) / 4) % 2 )) = 0 ]
}
for kind in dev file; do
	! sampled || trim_and_check ext2-1k $kind -t ext2 -b 1024
	! sampled || trim_and_check ext3 $kind -t ext3
	! sampled || trim_and_check ext4 $kind -t ext4 -g 4096
	! sampled || trim_and_check ext4-bigalloc $kind -t ext4 -O bigalloc -C 65536
done
exit 0
