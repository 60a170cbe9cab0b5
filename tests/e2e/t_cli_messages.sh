#!/bin/bash
# Messages that say what is there (issue 26, point 5): a wrong --format
# names the unknown format or the mismatch (no "install qemu-utils" when
# it is installed, no warning about a driver qemu does not have);
# img?offset= past the end is a usage error (3) that says the image's
# size; a mounted filesystem's mount point is called one, with fstrim as
# the way; -n -v says what the trim would free, not "0 B saved"; the
# first -v line is fstrim's, and "minimum raised" comes after it, only
# with -m or -v -v; -q keeps --histogram as it keeps --list.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$T" || fail "cd"
# 1 KiB blocks: on a 4 KiB-block host the hole punch granularity raises
# the minimum, the case where a note used to come first
mkfs one.img 32M -t ext4 -b 1024
age one.img 11
size=$(stat -c %s one.img)

# --format that the image contradicts: exit 3, the mismatch named
run_e2trim -n --format qcow2 one.img
assert_rc 3 "--format qcow2 on a raw ext image"
assert_grep "one.img: --format qcow2, but it has no qcow2 header" "$ERR" "no qcow2 header"
if command -v qemu-img >/dev/null && command -v qemu-nbd >/dev/null; then
	run_e2trim -n --format foo one.img
	assert_rc 3 "--format foo"
	assert_grep "unknown format foo" "$ERR" "the unknown format named"
	grep -q "keeps the space\|install qemu-utils" "$ERR" &&
		{ cat "$ERR"; fail "--format foo: a warning for a driver that is not there, or install advice"; }
	qemu-img create -q -f qcow2 vm.qcow2 32M || fail "qemu-img create"
	run_e2trim -n --format vmdk vm.qcow2
	assert_rc 3 "--format vmdk on a qcow2"
	assert_grep "vm.qcow2: --format vmdk, but its first bytes say qcow2; give --format qcow2" \
		"$ERR" "the mismatch named"
	grep -q "keeps the space\|install qemu-utils" "$ERR" &&
		{ cat "$ERR"; fail "--format vmdk: driver warning or install advice"; }
else
	note "left out (no qemu-img/qemu-nbd): --format foo, --format vmdk on a qcow2"
fi

# ?offset= at or past the end: a usage error that says the size
run_e2trim -n "one.img?offset=$size"
assert_rc 3 "?offset= at the end"
assert_grep "?offset=$size is past the end of one.img, which holds $size bytes" "$ERR" \
	"the image's size said"
grep -q "e2fsck" "$ERR" && { cat "$ERR"; fail "?offset past the end: e2fsck advised"; }

# -v: fstrim's line first; the note only with -m or -v -v, after it
run_e2trim -n -v one.img
assert_rc 0 "-n -v"
head -1 "$OUT" | grep -qE '^one\.img: [0-9.]+ [KMGT]?i?B \([0-9]+ bytes\) trimmed \(dry run\)$' ||
	{ cat "$OUT"; fail "-v: the first line is not fstrim's"; }
grep -q "minimum raised" "$OUT" && { cat "$OUT"; fail "-v without -m: a note"; }
bytes=$(sed -n '1s/.*(\([0-9]*\) bytes) trimmed (dry run)$/\1/p' "$OUT")
[ "$bytes" -gt 0 ] || fail "-n -v: nothing to trim on an aged image"
# a dry run frees nothing: say what the trim would, not "0 B saved"
grep -q "saved" "$OUT" && { cat "$OUT"; fail "-n -v: 'saved' in a dry run"; }
assert_grep "^one.img: image allocated .*; the trim would free up to .* (dry run)$" "$OUT" \
	"-n -v: what the trim would free"
for args in "-v -v" "-v -m 1K"; do
	# shellcheck disable=SC2086
	run_e2trim -n $args one.img
	head -1 "$OUT" | grep -q ' trimmed (dry run)$' || { cat "$OUT"; fail "$args: the first line is not fstrim's"; }
	assert_grep "^one.img: minimum raised to 4 KiB" "$OUT" "$args: the note"
done

# -q: --histogram and --list are asked for, and stay
run_e2trim -n -q --histogram one.img
assert_rc 0 "-q --histogram"
assert_grep "one.img: histogram of free extent sizes" "$OUT" "-q keeps --histogram"
run_e2trim -n -q --list one.img
[ -s "$OUT" ] || fail "-q keeps --list"

# a mounted filesystem's mount point (root: a loop device)
if [ "$(id -u)" != 0 ] || ! losetup -f >/dev/null 2>&1; then
	note "left out (not root): e2trim MOUNTPOINT"
	exit 0
fi
dev=$(loop_attach one.img)
mkdir -p mnt
mount -o ro "$dev" mnt || fail "mount"
MOUNTS+=("$T/mnt")
run_e2trim mnt
assert_rc 3 "a mount point"
assert_grep "mnt: .*the mount point of $dev, a mounted filesystem" "$ERR" "the mount point named"
assert_grep "fstrim mnt trims it mounted" "$ERR" "fstrim named as the way"
umount mnt
MOUNTS=()
exit 0
