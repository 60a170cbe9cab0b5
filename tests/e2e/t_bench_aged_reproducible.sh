#!/bin/bash
# make bench's aged images (tests/mkaged.sh) are the same bytes for the
# same seed, so that the same commit prints the same counts: made twice
# (64 MiB, seed 3), the two images have the same sha256 and the same
# free extents (dumpe2fs's free-block lists, our own oracle, and
# e2trim --list alike); another seed makes another image; e2fsck -fn
# finds both clean.  (../shared/bench/mkaged.sh, which mounts and lets
# the kernel place the files, made 535 free extents once and 547 later.)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

MKAGED=$(cd "$(dirname "$0")/.." && pwd)/mkaged.sh
for i in 1 2; do
	TMPDIR=$T bash "$MKAGED" "$T/a$i.img" 64 3 >/dev/null 2>&1 || fail "mkaged.sh run $i"
done
TMPDIR=$T bash "$MKAGED" "$T/b.img" 64 4 >/dev/null 2>&1 || fail "mkaged.sh seed 4"
assert_eq "$(sha_of "$T/a2.img")" "$(sha_of "$T/a1.img")" "the same seed, the image's sha256"
[ "$(sha_of "$T/b.img")" != "$(sha_of "$T/a1.img")" ] || fail "seeds 3 and 4 made the same image"
for img in a1 a2 b; do
	e2fsck -fn "$T/$img.img" >/dev/null 2>&1 || fail "$img: e2fsck -fn is not clean"
	dumpe2fs "$T/$img.img" 2>/dev/null | sed -n 's/^  Free blocks: //p' | tr ',' '\n' |
		sed '/^ *$/d' >"$T/$img.free"
	run_e2trim -n --list "$T/$img.img"
	assert_rc 0 "$img: e2trim -n --list"
	cp "$OUT" "$T/$img.list"
done
[ "$(wc -l <"$T/a1.free")" -gt 20 ] || fail "the aged image has few free runs: $(wc -l <"$T/a1.free")"
assert_eq "$(sha_of "$T/a2.free")" "$(sha_of "$T/a1.free")" "the same seed, dumpe2fs's free blocks"
assert_eq "$(sha_of "$T/a2.list")" "$(sha_of "$T/a1.list")" "the same seed, e2trim's extents"
note "seed 3: $(wc -l <"$T/a1.list") free extents, sha256 $(sha_of "$T/a1.img" | cut -c1-16)"
echo "PASS"
