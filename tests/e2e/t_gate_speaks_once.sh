#!/bin/bash
# Each gate runs once and speaks once.  On a filesystem with multi-mount
# protection that was not cleanly unmounted (s_state 0), a real trim, a
# dry run and both with --force: the refusal (13) is printed exactly once,
# with --force only the warning, never the refusal and then "trimming
# anyway"; every line in e2trim's style, "e2trim: <target>: ...".  The MMP
# block is left clean (the run released it).  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
mmp_no_wait	# MMP is taken here, but this is not about another node

img=$T/mmp.img
mkfs "$img" 64M -t ext4 -O mmp -E mmp_update_interval=1
debugfs -w -R "ssv state 0" "$img" >/dev/null 2>&1 || fail "debugfs ssv state 0"
dumpe2fs -h "$img" 2>/dev/null | grep -q "^Filesystem state: *not clean" ||
	fail "the image is not 'not clean'"

for dry in "" -n; do
	what="real run${dry:+ (dry)}"
	run_e2trim $dry "$img"
	assert_rc 13 "$what"
	assert_eq "$(wc -l <"$ERR")" 1 "$what: lines on stderr"
	assert_grep "^e2trim: $img: was not cleanly unmounted .*; run e2fsck -f first: \`e2fsck -fy $img\`$" "$ERR" \
		"$what: the refusal"

	run_e2trim $dry -f -v "$img"
	assert_rc 0 "$what with --force"
	assert_eq "$(grep -c 'trimming anyway' "$ERR")" 1 "$what with --force: warnings"
	grep -q "run e2fsck -f first" "$ERR" && { cat "$ERR" >&2; fail "$what with --force: the refusal was printed too"; }
	bad=$(grep -v "^e2trim: $img: WARNING: " "$ERR")
	[ -z "$bad" ] || fail "$what with --force: not e2trim's style: $bad"
	assert_grep " trimmed" "$OUT" "$what with --force: the report"
done
debugfs -R dump_mmp "$img" 2>/dev/null | grep -q "^sequence: ff4d4d50" ||
	fail "the MMP block was not left clean"
note "refusal once, --force warning once, MMP left clean"
exit 0
