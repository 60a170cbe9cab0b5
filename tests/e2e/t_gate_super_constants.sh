#!/bin/bash
# Superblock constants that e2fsck's check_super_block() will not accept
# (it stops with "Corruption found in superblock", exit 8) while
# libext2fs still opens the filesystem: first_ino below 11 (inodes 5-10
# would become ordinary ones) or past the last inode, r_blocks_count above
# half the blocks.  e2trim refuses each with 16
# before reading a bitmap, dry run or not, and the image is unchanged;
# the untouched filesystem still trims.  Found by the mutation campaign.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

orig="$T/orig.img" img="$T/f.img"
mkfs "$orig" 16M -t ext4
age "$orig" 5
run_e2trim -n "$orig"
assert_rc 0 "the clean filesystem"

for c in "first_ino 5:first_ino is 5, e2fsck accepts 11 to" \
	"first_ino 1:first_ino is 1, e2fsck accepts 11 to" \
	"r_blocks_count 3000:r_blocks_count is 3000, e2fsck accepts 0 to 2048" \
	"first_ino 99999:first_ino is 99999, e2fsck accepts 11 to"; do
	field=${c%%:*} want=${c#*:}
	cp "$orig" "$img"
	debugfs -w -R "ssv $field" "$img" >/dev/null 2>&1 || fail "ssv $field"
	e2fsck -fn "$img" >/dev/null 2>&1
	rc=$?
	[ "$rc" -ge 4 ] || fail "$field: e2fsck -fn exits $rc, expected it to object"
	sum=$(sha_of "$img")
	for opt in -n -v; do
		run_e2trim "$opt" "$img"
		assert_rc 16 "$field ($opt)"
		assert_grep "superblock: $want" "$ERR" "$field message"
		assert_grep "run e2fsck" "$ERR" "$field fix"
	done
	assert_eq "$(sha_of "$img")" "$sum" "image after $field"
	note "$field: e2fsck -fn $rc, e2trim 16, unchanged"
done
exit 0
