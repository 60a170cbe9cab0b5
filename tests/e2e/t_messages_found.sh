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
#    src/libe2trim.md.
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
finish
