#!/bin/bash
# What e2fsck -fy brings back, e2trim must not destroy.  Each fixture
# below hides a 64-block file ("kept") from e2trim's inode scan or lies
# in a group's summary counts, with every checksum right: its inode in a
# group flagged INODE_UNINIT, or past bg_itable_unused, or free in the
# inode bitmap, its blocks free in the block bitmap.  On a copy,
# e2fsck -fy finds the file again (through the directory entry, pass 2)
# and keeps every byte; e2trim refuses the damaged image with its own
# exit code and changes nothing, where --no-verify (and e2trim before
# these checks) would have planned the file's blocks.  On the repaired
# copy e2trim trims, and the file still reads back the same.  Wrong
# superblock totals, which e2fsck -fn does not call an error, pass.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

IMAGES=$(cd "$(dirname "$0")/../../images" && pwd)

# The file's bytes, from mkverify.sh's formula: 64 blocks of 4 KiB.
want=$(python3 -c 'import sys, hashlib
n = 64 * 4096
print(hashlib.sha256(bytes((i * 7 + i // 4096) & 255 for i in range(n))).hexdigest())')

# dump IMG PATH: the sha256 of a file as debugfs reads it (no bitmap asked)
dump() { debugfs -R "dump $2 $T/dumped" "$1" >/dev/null 2>&1; sha_of "$T/dumped"; }

# planned IMG PATH: does e2trim --no-verify plan any block of the file?
planned() {
	local bs blocks
	bs=$(dumpe2fs -h "$1" 2>/dev/null | awk '/^Block size:/ {print $3}')
	blocks=$(debugfs -R "blocks $2" "$1" 2>/dev/null)
	run_e2trim -n --no-verify --list "$1"
	assert_rc 0 "--no-verify dry run of $1"
	awk -v bs="$bs" -v blocks="$blocks" 'BEGIN { n = split(blocks, b, " ") }
		{ for (i = 1; i <= n; i++)
			if ($1 <= b[i] * bs && b[i] * bs + bs <= $1 + $2) f = 1 }
		END { exit !f }' "$OUT"
}

# name, where e2fsck -fy leaves the file, where it is before
while read -r name after before; do
	code=$(bash "$IMAGES/mkverify.sh" --list | awk -v n="$name" '$1 == n {print $2}')
	[ -n "$code" ] || fail "$name is not in mkverify.sh --list"
	img=$T/$name.img
	xz -dc "$IMAGES/verify/$name.img.xz" >"$img" || fail "xz -d $name"
	assert_eq "$(dump "$img" "$before")" "$want" "$name: the file before"

	# e2trim refuses, and changes nothing
	sum=$(sha_of "$img")
	run_e2trim -v "$img"
	assert_rc "$code" "$name: trim"
	assert_grep "run e2fsck -f first" "$ERR" "$name: names the fix"
	assert_eq "$(sha_of "$img")" "$sum" "$name: image changed"
	danger=no
	if planned "$img" "$before"; then danger=yes; fi
	[ "$code" = 22 ] || [ "$danger" = yes ] ||
		fail "$name: --no-verify would not trim the file: nothing is at stake"

	# e2fsck -fy keeps the file, byte for byte
	cp "$img" "$T/fixed.img"
	rc=0; e2fsck -fy "$T/fixed.img" >"$T/fsck" 2>&1 || rc=$?
	[ "$rc" -le 1 ] || { cat "$T/fsck" >&2; fail "$name: e2fsck -fy exited $rc"; }
	e2fsck -fn "$T/fixed.img" >"$T/fsck" 2>&1 ||
		{ cat "$T/fsck" >&2; fail "$name: not clean after e2fsck -fy"; }
	assert_eq "$(dump "$T/fixed.img" "$after")" "$want" "$name: the file after e2fsck -fy"

	# then e2trim trims, and the file is still there
	run_e2trim -v "$T/fixed.img"
	assert_rc 0 "$name: trim after e2fsck -fy"
	assert_eq "$(dump "$T/fixed.img" "$after")" "$want" "$name: the file after the trim"
	e2fsck -fn "$T/fixed.img" >"$T/fsck" 2>&1 ||
		{ cat "$T/fsck" >&2; fail "$name: not clean after the trim"; }
	note "$name: exit $code; --no-verify would trim the file: $danger; e2fsck -fy keeps it at $after"
	rm -f "$img" "$T/fixed.img"
done <<'EOF'
verify-inode-uninit  kept            kept
verify-itable-unused kept            kept
verify-inode-bitmap  kept            kept
verify-count-blocks  kept            kept
verify-count-inodes  kept            kept
verify-count-dirs    kept            kept
verify-count-unused  lost+found/#12  <12>
EOF

# The superblock's totals are advisory: e2fsck -fn reports them wrong and
# still exits 0 (it corrects them silently), and so e2trim accepts them.
img=$T/sb-totals.img
xz -dc "$IMAGES/ext4.img.xz" >"$img" || fail "xz -d ext4"
printf '%s\n' "ssv free_blocks_count 12345" "ssv free_inodes_count 77" >"$T/cmds"
debugfs -w -f "$T/cmds" "$img" >/dev/null 2>&1 || fail "debugfs ssv"
e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck -fn calls wrong totals an error"; }
assert_grep "Free blocks count wrong (12345" "$T/fsck" "superblock totals: e2fsck sees them"
run_e2trim -n "$img"
assert_rc 0 "superblock totals wrong: dry run"
note "superblock totals wrong: e2fsck -fn exits 0, e2trim accepts"
exit 0
