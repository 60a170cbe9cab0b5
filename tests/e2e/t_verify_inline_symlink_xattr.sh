#!/bin/bash
# An inline-data symlink whose extended attributes sit in an xattr block
# (mke2fs -d -O inline_data puts a long SELinux label there; a 600-byte
# trusted.* attribute here).  e2fsck 1.47.0's pass 1 never counts that
# block: e2fsck -fy frees it in pass 5, and e2fsck -fn then calls the image
# clean.  e2trim keeps refusing (19: the block is in use), and must not
# name "run e2fsck -f" as the fix, which changes nothing: the message says
# what the block is, names no command for a script ("fix": null), and
# e2fsck -fy then indeed leaves the refusal as it was.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root	# a trusted.* attribute on a symlink

mkdir -p "$T/src"
ln -s "/$(printf 'x%.0s' $(seq 1 80))" "$T/src/link"
python3 -c 'import os, sys
os.setxattr(sys.argv[1], "trusted.big", b"a" * 600, follow_symlinks=False)' "$T/src/link" ||
	fail "setxattr on the link"
img=$T/il.img
mkfs "$img" 16M -t ext4 -I 256 -O inline_data -d "$T/src"
dfs_read "$img" "stat link" >"$T/stat"
assert_grep "Flags: 0x10000000" "$T/stat" "the link has inline data"
blk=$(sed -n 's/.*File ACL: \([0-9]*\).*/\1/p' "$T/stat")
[ "${blk:-0}" != 0 ] || fail "the link's attributes are not in a block"
e2fsck -fy "$img" >"$T/fsck" 2>&1
assert_grep "Block bitmap differences:  -$blk" "$T/fsck" "e2fsck -fy frees the xattr block"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck -fn after -fy is not clean"

for round in 1 2; do
	RC=0
	"$E2TRIM" --json -n "$img" >"$T/json" 2>"$T/err" || RC=$?
	assert_rc 19 "round $round"
	assert_grep "block $blk: extended attribute block of inode 12; inode 12 is a symlink with inline data" \
		"$T/err" "round $round: says what the block is"
	assert_grep "e2fsck -f cannot mend this" "$T/err" "round $round: the fix"
	grep -q '`' "$T/err" && { cat "$T/err"; fail "round $round: a command for a script, which mends nothing"; }
	python3 -c 'import json, sys
assert json.load(open(sys.argv[1]))["targets"][0]["fix"] is None' "$T/json" ||
		fail "round $round: \"fix\" is not null"
	# what the old message said to do: it changes nothing
	e2fsck -fy "$img" >/dev/null 2>&1
done
note "block $blk, freed by e2fsck -fy and refused (19) before and after, naming the link"
finish
