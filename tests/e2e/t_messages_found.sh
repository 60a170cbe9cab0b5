#!/bin/bash
# Messages that say what was found (issue 42, point 5) and help that
# matches the program (point 6):
#  - an image of another filesystem (vfat) names what libblkid found
#    there, not only "Bad magic number in super-block"; -p N on a BIOS
#    boot partition names the partition's type;
#  - an image marked immutable or append-only (chattr +i, +a) says it is
#    the attribute, with chattr -i/-a as the fix, even for root;
#  - --help does not count 20 and 21 among the refusals, and its -q line
#    names --progress;
#  - debian/: e2trim Suggests nbdfuse and librbd1, libe2trim-dev ships
#    src/libe2trim.md;
#  - libe2trim(3) names every member of struct e2trim_result, the two
#    callback typedefs, and that a handle is opened once; neither man
#    page says that pkg-config --static alone links the archive.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)

truncate -s 20M "$T/vfat.img"
mkfs.vfat "$T/vfat.img" >/dev/null 2>&1 || fail "mkfs.vfat"
run_e2trim -n "$T/vfat.img"
assert_rc 11 "vfat image"
assert_grep "libblkid finds vfat there" "$ERR" "vfat image"

truncate -s 40M "$T/bios.img"
printf 'label: gpt\nstart=2048, size=2048, type=21686148-6449-6E6F-744E-656564454649\nstart=4096, type=L\n' |
	sfdisk -q "$T/bios.img" >/dev/null 2>&1 || fail sfdisk
head -c 1M /dev/urandom | dd of="$T/bios.img" bs=1M seek=1 conv=notrunc status=none || fail dd
run_e2trim -n -p 1 "$T/bios.img"
assert_rc 11 "-p 1, a BIOS boot partition"
assert_grep "BIOS boot partition" "$ERR" "-p 1, a BIOS boot partition"

if [ "$(id -u)" = 0 ]; then
	xz -dc "$IMAGES/ext4.img.xz" >"$T/attr.img" || fail "xz -dc"
	for a in i a; do
		chattr +$a "$T/attr.img" 2>/dev/null || { left_out "chattr +$a here"; continue; }
		run_e2trim "$T/attr.img"
		chattr -$a "$T/attr.img"
		assert_rc 1 "chattr +$a"
		assert_grep "(chattr +$a)" "$ERR" "chattr +$a: the attribute named"
		assert_grep "chattr -$a it" "$ERR" "chattr +$a: the fix"
	done
else
	left_out "chattr +i/+a (root)"
fi

run_e2trim --help
assert_rc 0 "--help"
! grep -q "A refusal (10-27)" "$OUT" || fail "--help counts 20 and 21 among the refusals"
grep -A1 -- "-q, --quiet" "$OUT" | grep -q -- "--progress" || { cat "$OUT"; fail "--help: the -q line does not name --progress"; }

grep -q '^Suggests:.*nbdfuse' "$TOP/debian/control" || fail "debian/control: e2trim does not Suggest nbdfuse"
grep -q '^Suggests:.*librbd1' "$TOP/debian/control" || fail "debian/control: e2trim does not Suggest librbd1"
grep -qx 'src/libe2trim.md' "$TOP/debian/libe2trim-dev.docs" || fail "libe2trim-dev does not ship src/libe2trim.md"
# libe2trim(3) is enough to write a program from
man3=$TOP/src/libe2trim.3
members=$(sed -n '/^struct e2trim_result {/,/^};/p' "$TOP/src/e2trim.h" |
	sed -n 's/^[[:space:]]*[a-z0-9_]* \([a-z_]*\)\(\[[0-9]*\]\)\{0,1\};.*/\1/p')
[ "$(echo "$members" | wc -l)" -gt 30 ] || fail "struct e2trim_result's members not read from e2trim.h"
for m in $members; do
	grep -q "^\.I[R]* $m\b" "$man3" || fail "libe2trim(3) does not name struct e2trim_result's member $m"
done
for ty in e2trim_extent_fn e2trim_progress_fn; do
	grep -q "typedef.*$ty" "$man3" || fail "libe2trim(3) lacks the typedef of $ty"
done
grep -q "handle is opened once" "$man3" || fail "libe2trim(3) does not say a handle is opened once"
for page in "$man3" "$TOP/src/e2trim.8"; do
	grep -q "variable=libdir e2trim)/libe2trim.a" "$page" || fail "$page: how to link the archive"
done
finish
