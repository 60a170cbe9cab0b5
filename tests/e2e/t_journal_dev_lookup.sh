#!/bin/bash
# An external journal is looked up as e2fsck looks it up (blkid_get_devname()
# in libblkid's default cache, here a cache file of the test's own through
# BLKID_FILE), and the device found is believed only if its UUID is the
# superblock's s_journal_uuid.  Two candidates: the cache still names
# loop X for journal A's UUID, but X now holds journal B, and A is on loop Y.
#  - e2trim does not read B's journal as A's: it probes afresh, finds A on
#    Y and trims (main refused it: "not found", 14);
#  - with A attached nowhere, e2trim refuses (14, "not found"), B being
#    named by the cache notwithstanding.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

export BLKID_FILE=$T/blkid.tab
for n in A B; do
	truncate -s 8M "$T/j$n.img"
	mke2fs -q -F -O journal_dev -b 4096 "$T/j$n.img" || fail "mke2fs journal_dev $n"
done
ja=$(dumpe2fs -h "$T/jA.img" 2>/dev/null | awk '/^Filesystem UUID/ {print $3}')
x=$(loop_attach "$T/jA.img")
mkfs "$T/fs.img" 64M -t ext4 -J device="$x" >/dev/null
blkid -c "$BLKID_FILE" "$x" >/dev/null || fail "blkid $x"
# X now holds B; the cache still says A is on X
losetup -d "$x"
losetup "$x" "$T/jB.img" || fail "losetup $x jB.img"
[ "$(blkid -c "$BLKID_FILE" -U "$ja")" = "$x" ] || fail "setup: the cache does not name $x for A"

run_e2trim -n "$T/fs.img"
assert_rc 14 "A attached nowhere, the cache naming $x (B)"
assert_grep "external journal UUID=$ja not found" "$ERR" "A attached nowhere"

y=$(loop_attach "$T/jA.img")
run_e2trim -v "$T/fs.img"
assert_rc 0 "A on $y, the cache naming $x (B)"
e2fsck -fn -j "$y" "$T/fs.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn with A"; }
note "cache stale ($x holds B): refused while A is nowhere, trimmed with A on $y"
finish
