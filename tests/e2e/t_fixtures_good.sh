#!/bin/bash
# Every good fixture of images/ (aged ext2/3/4 layouts, see images/README.md):
# the dry-run plan equals dumpe2fs's free extents (trimmed inward to the
# host filesystem's block, as --list prints them), with -m and with -o/-l
# ranges; no extent touches the boot block, a superblock, descriptors,
# bitmaps or inode tables, or goes past the filesystem's last block (the
# tail of ext4-tail's image stays out); where flex_bg lets free runs cross
# group edges, some do and are planned as one extent; and the dry runs
# leave the image byte for byte as it was; then a real trim of a copy keeps
# every used block byte-identical, changes nothing outside the plan, and
# leaves e2fsck -fn clean.
#
# Each fixture is checked on its own, so one failing does not hide the
# others; the test fails if any did.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"
mmp_no_wait	# the real trims of the MMP layout: not about another node
here=$(dirname "$0")/..

check_good() {		# name
	local name=$1 img bs count fs_bytes size sum
	img=$(fixture "$name") || exit 1
	sum=$(sha_of "$img")
	bs=$(sb_field "$img" "Block size")
	count=$(sb_field "$img" "Block count")
	fs_bytes=$((bs * count))
	size=$(stat -c %s "$img")
	fixture_covers "$name" "$img"

	run_e2trim -n --list "$img"
	assert_rc 0 "$name: dry run"
	list_oracle "$img" "$img" >"$T/want"
	[ -s "$T/want" ] || fail "$name: dumpe2fs lists no free space"
	cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head >&2; fail "$name: plan differs from dumpe2fs"; }
	[ ! -s "$ERR" ] || { cat "$ERR" >&2; fail "$name: dry run wrote to stderr"; }
	cp "$OUT" "$T/plan"

	# never the boot block, a superblock or other metadata; never past the end
	metadata_overlap "$img" "$T/plan" >"$T/overlap"
	[ ! -s "$T/overlap" ] || { head "$T/overlap" >&2; fail "$name: plan covers metadata"; }
	local first last
	first=$(awk 'NR == 1 {print $1}' "$T/plan")
	last=$(awk '{e = $1 + $2} END {print e}' "$T/plan")
	[ "$first" -ge $(( $(sb_field "$img" "First block") * bs )) ] ||
		fail "$name: first extent $first below the first data block"
	[ "$first" -ge 2048 ] || fail "$name: first extent $first in the boot block or superblock"
	[ "$last" -le "$fs_bytes" ] || fail "$name: plan ends at $last, past the filesystem ($fs_bytes)"
	if [ "$size" -gt "$fs_bytes" ]; then
		# the image's tail is not the filesystem's: no range reaches it
		run_e2trim -n --list -o 0 -l "$size" "$img"
		assert_rc 0 "$name: -l the whole image"
		cmp -s "$OUT" "$T/plan" || fail "$name: -l past the filesystem changed the plan"
		run_e2trim -n --list -o "$fs_bytes" "$img"
		assert_rc 3 "$name: -o at the start of the tail"
		[ ! -s "$OUT" ] || fail "$name: -o in the tail planned extents"
		note "$name: $((size - fs_bytes)) tail bytes after the filesystem stay out"
	fi

	# free runs across group edges are one extent
	local crossing n=0
	crossing=$(crossing_extents "$img" "$T/plan")
	for c in "${CROSSING_FIXTURES[@]}"; do [ "$c" != "$name" ] || n=1; done
	[ "$n" = 0 ] || [ "$crossing" -gt 0 ] || fail "$name: no free extent crosses a group edge"

	# -m: extents of exactly minlen stay, one byte more drops them
	local m mm
	m=$(oracle_extents "$img" | sort -n -k2 | awk 'NR <= 2 {v = $2} END {print v}')
	for mm in "$m" $((m + 1)) $((bs * 64)); do
		run_e2trim -n --list -m "$mm" "$img"
		assert_rc 0 "$name: -m $mm"
		list_oracle "$img" "$img" "$mm" >"$T/want.m"
		cmp -s "$OUT" "$T/want.m" || { diff "$OUT" "$T/want.m" | head >&2; fail "$name: -m $mm differs from dumpe2fs"; }
	done

	# ranges that start and end inside extents, unaligned by one byte
	local o l r o1 l1
	o=$(( fs_bytes / 3 + 1 )); l=$(( fs_bytes / 4 - 1 ))
	for r in "$o $l" "$((o - 1)) $((l + 1))" "0 $fs_bytes" "0 $bs" "$bs $bs" \
		 "$((fs_bytes - bs)) $bs" "$o 99999999999999"; do
		read -r o1 l1 <<<"$r"
		set -- "$o1" "$l1"
		run_e2trim -n --list -o "$1" -l "$2" "$img"
		assert_rc 0 "$name: -o $1 -l $2"
		list_oracle "$img" "$img" 0 "$1" "$2" >"$T/want.r"
		cmp -s "$OUT" "$T/want.r" || { diff "$OUT" "$T/want.r" | head >&2; fail "$name: -o $1 -l $2 differs from dumpe2fs"; }
	done

	# -v: a total, no more than the free extents add up to (an image
	# file's host filesystem may keep unaligned edges back)
	local free_sum said
	free_sum=$(awk '{s += $2} END {print s}' "$T/plan")
	run_e2trim -n -v "$img"
	assert_rc 0 "$name: -v"
	assert_grep "bytes) trimmed (dry run)" "$OUT" "$name: -v total"
	said=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed (dry run).*/\1/p' "$OUT")
	if [ "$said" -le 0 ] || [ "$said" -gt "$free_sum" ]; then
		fail "$name: -v says $said bytes, free extents add up to $free_sum"
	fi

	assert_eq "$(sha_of "$img")" "$sum" "$name: image after dry runs"
	note "$name: $(wc -l <"$T/plan") extents match dumpe2fs, $crossing cross a group edge; image unchanged"

	# a real trim of a copy: used blocks byte-identical, nothing outside
	# the plan changed, e2fsck -fn clean
	local used hbs
	used=$(used_blocks_digest "$img")
	hbs=$(stat -f -c %S "$img")
	cp "$img" "$T/before.img"
	run_e2trim -v "$img"
	assert_rc 0 "$name: real trim"
	# taking MMP, as e2fsck does, rewrites the MMP block: it must be clean
	# again afterwards; then put back the old one, so that what follows
	# proves no other byte changed
	local mmp
	mmp=$(sb_field "$img" "MMP block number")
	if [ -n "$mmp" ]; then
		debugfs -R dump_mmp "$img" 2>/dev/null | grep -q "^sequence: ff4d4d50" ||
			fail "$name: MMP block not clean after a real trim"
		dd if="$T/before.img" of="$img" bs="$bs" skip="$mmp" seek="$mmp" \
			count=1 conv=notrunc status=none
	fi
	assert_eq "$(used_blocks_digest "$img")" "$used" "$name: used blocks after a real trim"
	python3 "$here/same_outside.py" "$T/before.img" "$img" "$T/plan" "$hbs" >/dev/null ||
		fail "$name: a real trim changed bytes outside the plan"
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$name: e2fsck -fn after a real trim"; }
	rm -f "$img" "$T/before.img"
}

failed=()
i=0
for name in "${GOOD_FIXTURES[@]}"; do
	# under a checker (E2E_SAMPLE) every other one: the plain pass runs all
	i=$((i + 1))
	in_sample "$i" 2 1 || continue
	( check_good "$name" ) || failed+=("$name")
done
[ ${#failed[@]} = 0 ] || fail "good fixtures that failed: ${failed[*]}"
exit 0
