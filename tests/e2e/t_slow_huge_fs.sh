#!/bin/bash
# A filesystem of more than 2^32 blocks: 5 TiB of 1 KiB blocks, 5.37 G
# blocks, made at test time in a sparse file (about 500 MB on disk and a
# minute of mke2fs; removed at the end; a second pass copies the first's).  Three files are put where 32-bit
# block arithmetic would go wrong (tests/tools/place_file.c): one well
# above 2^32, one across 2^32, one ending on the very last block.  Then:
#  - the plan of a window from just below 2^32 to the end (-o/-l) is
#    exactly dumpe2fs's free extents there, trimmed inward to the host
#    filesystem's block;
#  - a trim of the image file, then one through a loop device, turn junk
#    written into the free blocks next to each file into holes and leave
#    every byte of the files as it was (debugfs dump, md5);
#  - e2trim's peak RSS stays under 200 MB.
# Slow (2-3 minutes), but part of make check.
# e2e: slow (minutes: started first, so that it does not end the run alone)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
here=$(cd "$(dirname "$0")/.." && pwd)
MAX_RSS_KB=$((200 * 1024))
B32=4294967296

tool=$T/place_file
# shellcheck disable=SC2046
${CC:-cc} -o "$tool" "$here/tools/place_file.c" \
	$(pkg-config --cflags --libs ext2fs com_err) || fail "cannot build place_file"

# The image with its three files is the same in make check and make check
# SANITIZE=1: the first pass keeps it in $E2E_CACHE (tests/e2e/run.sh),
# keyed by this script, place_file.c and mke2fs's version, and the second
# copies it (SEEK_DATA: the 500 MB, not the 5 TiB) instead of making it.
img=$T/huge.img
for f in far edge last; do
	python3 -c 'import random, sys
sys.stdout.buffer.write(random.Random(sys.argv[1]).randbytes(1 << 20))' "$f" >"$T/$f.data"
done
key=$({ cat "$0" "$here/tools/place_file.c"; mke2fs -V 2>&1; } | sha256sum | cut -c1-16)
cached=${E2E_CACHE:+$E2E_CACHE/huge-$key}
if [ -n "$cached" ] && [ -f "$cached.img" ] && [ -f "$cached.placed" ] &&
	[ -f "$cached.oracle" ]; then
	cp --sparse=always "$cached.img" "$img" || fail "cannot copy $cached.img"
	cp "$cached.placed" "$T/placed"
	count=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ {print $3}')
	note "the image made by an earlier pass: $cached.img"
else
	truncate -s 5T "$img"
	mke2fs -q -F -U "$UUID" -t ext4 -b 1024 -O 64bit \
		-E hash_seed="$UUID",lazy_itable_init=1,lazy_journal_init=1,nodiscard \
		"$img" 2>"$T/mke2fs.err" || { cat "$T/mke2fs.err" >&2; fail "mke2fs of the 5 TiB image"; }
	count=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ {print $3}')
	[ "$count" -gt "$B32" ] || fail "only $count blocks"
	"$tool" "$img" far $((count - 300000)) "$T/far.data" \
		edge $((B32 - 512)) "$T/edge.data" \
		last $((count - 1024)) "$T/last.data" >"$T/placed" || fail "place_file"
	if [ -n "$cached" ] && mkdir -p "$E2E_CACHE"; then
		# whole or not at all: a pass stopped halfway leaves no half image
		if cp --sparse=always "$img" "$cached.img.$$" && cp "$T/placed" "$cached.placed"; then
			mv "$cached.img.$$" "$cached.img"
		else
			rm -f "$cached.img.$$"
		fi
	fi
fi
[ "$count" -gt "$B32" ] || fail "only $count blocks"
read -r _ far_first _ < <(grep '^far ' "$T/placed")
read -r _ edge_first edge_last < <(grep '^edge ' "$T/placed")
read -r _ _ last_last < <(grep '^last ' "$T/placed")
[ "$far_first" -gt "$B32" ] || fail "far starts at block $far_first, not above 2^32"
[ "$edge_first" -lt "$B32" ] || fail "edge starts at block $edge_first, above 2^32"
[ "$edge_last" -ge "$B32" ] ||
	fail "edge ($edge_first-$edge_last) does not cross 2^32"
assert_eq "$last_last" $((count - 1)) "the last file's last block"
note "$count blocks; files at: $(tr '\n' ' ' <"$T/placed")"

# the window: from 64 Ki blocks below 2^32 to the end
first=$((B32 - 65536))
W=$((first * 1024))
L=$(((count - first) * 1024))
# dumpe2fs over 655 360 groups: 20 s of CPU, kept with the image
if [ -n "$cached" ] && [ -f "$cached.oracle" ]; then
	cp "$cached.oracle" "$T/oracle"
else
	oracle_extents "$img" 0 "$W" "$L" >"$T/oracle"
	[ -z "$cached" ] || { cp "$T/oracle" "$cached.oracle.$$" && mv "$cached.oracle.$$" "$cached.oracle"; }
fi
[ "$(wc -l <"$T/oracle")" -gt 1000 ] || fail "the window holds only $(wc -l <"$T/oracle") free extents"

aligned_extents "$(granularity "$img")" <"$T/oracle" >"$T/oracle.list"
run_e2trim -n --list -o "$W" -l "$L" "$img"
assert_rc 0 "dry run of the window"
cmp -s "$OUT" "$T/oracle.list" || { diff "$OUT" "$T/oracle" | head >&2; fail "plan above 2^32 differs from dumpe2fs"; }
note "window: $(wc -l <"$T/oracle") free extents, the same as dumpe2fs's"

# junk JUNK: write 0x5a over the free blocks within 1 MiB of each file
# and list them ("start length" in bytes)
junk() {
	python3 - "$img" "$T/oracle" "$T/placed" >"$T/junk" <<'PY'
import sys
img, oracle, placed = sys.argv[1:]
near = []
for line in open(placed):
    _, a, b = line.split()
    near.append(((int(a) - 1024) * 1024, (int(b) + 1025) * 1024))
with open(img, "r+b") as f:
    for line in open(oracle):
        s, n = map(int, line.split())
        for a, b in near:
            lo, hi = max(s, a), min(s + n, b)
            if lo < hi:
                f.seek(lo)
                f.write(b"\x5a" * (hi - lo))
                print(lo, hi - lo)
PY
	[ -s "$T/junk" ] || fail "no free blocks next to the files"
}
files_md5() {
	local f
	for f in far edge last; do
		debugfs -c -R "dump /$f $T/$f.out" "$img" >/dev/null 2>&1
		cmp -s "$T/$f.data" "$T/$f.out" || fail "$1: /$f differs from what was written"
		rm -f "$T/$f.out"
	done
}
# trim TARGET WHAT: trim, measure peak RSS, check holes and files
trim() {
	local target=$1 what=$2 rss
	junk
	E2TRIM_WRAP="/usr/bin/time -f %M -o $T/rss ${E2TRIM_WRAP:-}" run_e2trim -v "$target"
	assert_rc 0 "trim ($what)"
	[ "$target" = "$img" ] || { losetup -d "$target"; LOOPS=(); }
	python3 "$here/holes.py" "$img" "$T/junk" 4096 >/dev/null ||
		fail "$what: the junk next to the files was not trimmed"
	files_md5 "$what"
	rss=$(tail -1 "$T/rss")
	note "$what: $(grep ' trimmed$' "$OUT" | sed 's/^[^:]*: //'), peak RSS $((rss / 1024)) MB"
	if [ -z "${E2TRIM_WRAP:-}" ]; then
		[ "$rss" -lt "$MAX_RSS_KB" ] || fail "$what: peak RSS $rss KB, over $MAX_RSS_KB KB"
	fi
}
files_md5 "before"
trim "$img" "image file"
trim "$(loop_attach "$img")" "loop device"

# still passes every gate and verification, and plans the same
run_e2trim -n --list -o "$W" -l "$L" "$img"
assert_rc 0 "dry run after the trims"
cmp -s "$OUT" "$T/oracle.list" || fail "the plan changed after the trims"
rm -f "$img"
exit 0
