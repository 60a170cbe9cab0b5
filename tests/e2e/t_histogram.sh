#!/bin/bash
# --histogram: the free extents by size (power-of-two buckets from one
# cluster up), of the extents e2trim sees: merged across groups, inside
# the range, before the minimum.  On ext2 with 1 KiB blocks, ext4 and both
# bigalloc fixtures every bucket's count and bytes equal those of the
# free extents dumpe2fs lists, merged across groups here (on bigalloc in
# clusters, where e2freefrag counts wrong); the totals add up to them;
# a minimum changes nothing in it, a range restricts it; --json carries
# the same buckets.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"

# oracle_hist IMG UNIT [START LEN]: "bucket count bytes" of dumpe2fs's
# merged free extents, bucket i holding UNIT << i up to twice that.
oracle_hist() {
	oracle_extents "$1" 0 "${3:-0}" "${4:-}" | awk -v u="$2" '{
		i = 0; while ($2 >= u * 2 ^ (i + 1)) i++
		if (i > max) max = i
		n[i]++; b[i] += $2
	} END { for (i = 0; i <= max; i++) if (n[i]) printf "%d %.0f %.0f\n", i, n[i], b[i] }'
}

# table_hist UNIT: the same three columns, from e2trim's table on stdin
# (the last three fields of each bucket line: count, bytes, percent; the
# bucket from the lower bound, the line's first size).
table_hist() {
	awk -v u="$1" '
	/^ *total / { next }
	/ - / {
		split($0, h, " - "); lo = h[1]; gsub(/^ +/, "", lo)
		split(lo, p, " "); m = p[1]
		if (p[2] == "KiB") m *= 1024; else if (p[2] == "MiB") m *= 1048576
		else if (p[2] == "GiB") m *= 1073741824
		i = 0; while (u * 2 ^ i < m) i++
		printf "%d %s %s\n", i, $(NF - 2), $(NF - 1)
	}'
}

check() {	# fixture
	local name=$1 img cs n b
	img=$(fixture "$name") || exit 1
	cs=$(sb_field "$img" "Cluster size")
	[ -n "$cs" ] || cs=$(sb_field "$img" "Block size")

	oracle_hist "$img" "$cs" >"$T/want"
	[ -s "$T/want" ] || fail "$name: dumpe2fs lists no free space"
	# a minimum larger than most extents: the histogram still has them all
	run_e2trim -n --histogram -m 4M "$img"
	assert_rc 0 "$name: --histogram"
	table_hist "$cs" <"$OUT" >"$T/got"
	cmp -s "$T/got" "$T/want" || { diff "$T/got" "$T/want" >&2; cat "$OUT" >&2; fail "$name: histogram differs from dumpe2fs"; }
	n=$(oracle_extents "$img" | wc -l)
	b=$(oracle_extents "$img" | awk '{s += $2} END {printf "%.0f", s}')
	read -r t1 t2 t3 < <(awk '$1 == "total" {print $2, $3, $4}' "$OUT")
	assert_eq "$t1 $t2 $t3" "$n $b 100.00%" "$name: totals"
	awk '/%$/ && $1 != "total" {gsub(/%/, "", $NF); s += $NF} END {exit !(s > 99.9 && s < 100.1)}' "$OUT" \
		|| fail "$name: percentages do not add up to 100"
	note "$name: $n extents, $b bytes, $(wc -l <"$T/want") buckets match dumpe2fs"

	# --json carries the same buckets, in bytes (bucket i from UNIT << i)
	run_e2trim -n --json --histogram -m 4M "$img"
	assert_rc 0 "$name: --json --histogram"
	python3 - "$OUT" "$cs" >"$T/got.j" <<'PY' || fail "$name: JSON histogram malformed"
import json, sys
h = json.load(open(sys.argv[1]))["targets"][0]["histogram"]
unit = int(sys.argv[2])
assert h["unit"] == unit, h["unit"]
assert h["extents"] == sum(b["extents"] for b in h["buckets"])
assert h["bytes"] == sum(b["bytes"] for b in h["buckets"])
for b in h["buckets"]:
    i = (b["min"] // unit).bit_length() - 1
    assert b["min"] == unit << i and b["max"] in (None, unit << (i + 1)), b
    print(i, b["extents"], b["bytes"])
PY
	cmp -s "$T/got.j" "$T/want" || { diff "$T/got.j" "$T/want" >&2; fail "$name: JSON histogram differs from dumpe2fs"; }

	# a range: only the extents inside it, clipped
	local fs_bytes o l
	fs_bytes=$(( $(sb_field "$img" "Block size") * $(sb_field "$img" "Block count") ))
	o=$((fs_bytes / 3)); l=$((fs_bytes / 3))
	oracle_hist "$img" "$cs" "$o" "$l" >"$T/want.r"
	run_e2trim -n --histogram -o "$o" -l "$l" "$img"
	assert_rc 0 "$name: --histogram -o -l"
	table_hist "$cs" <"$OUT" >"$T/got.r"
	cmp -s "$T/got.r" "$T/want.r" || { diff "$T/got.r" "$T/want.r" >&2; fail "$name: histogram of a range differs"; }
}

for f in ext2-1k ext4 ext4-bigalloc16k ext4-bigalloc64k; do
	check "$f"
done

# -q keeps --histogram: it was asked for, as --list is (issue 26)
img=$(fixture ext4)
run_e2trim -n -q --histogram "$img"
assert_rc 0 "-q --histogram"
grep -q "histogram of free extent sizes" "$OUT" || fail "-q dropped --histogram"
[ ! -s "$ERR" ] || fail "-q --histogram: something on stderr"
exit 0
