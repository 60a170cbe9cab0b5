#!/bin/bash
# An image file attached to a loop device and mounted after e2trim opened
# it, while it verified: e2trim looks for loop devices again before the
# first discard and stops with 10; the file written through the mount
# survives (its bytes via debugfs dump), the filesystem is clean, and
# nothing was punched.  The run is paused at that point by its test hook
# (a FIFO handshake), not by timing; then again between two discards.
# Needs root (losetup, mount).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

img="$T/fs.img"
mkfs "$img" 128M -t ext4
age "$img" 4
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck before"

# attached (and mounted) between open and the first discard
pause_e2trim -v "$img"
loop=$(loop_attach "$img")
mkdir -p "$T/mnt"
mount "$loop" "$T/mnt" || fail "mount $loop"
MOUNTS+=("$T/mnt")
head -c 24M /dev/urandom >"$T/late.src"
cp "$T/late.src" "$T/mnt/late" || fail "writing through the mount"
sync
want=$(sha256sum <"$T/late.src")
alloc=$(alloc_bytes "$img")
resume_e2trim
assert_rc 10 "a loop device attached during the run"
assert_grep "attached to $loop since e2trim opened it" "$ERR" "10's message names it"
assert_eq "$(alloc_bytes "$img")" "$alloc" "bytes allocated to the image (nothing punched)"
unmount_loop "$T/mnt" "$loop"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after"
debugfs -R "dump /late $T/late.out" "$img" >/dev/null 2>&1 || fail "debugfs dump"
assert_eq "$(sha256sum <"$T/late.out")" "$want" "the file written through the mount"
note "a loop device attached and mounted during the run: 10, its file intact"

# attached only (no mount): the same refusal, before any discard; the
# image as the umount above left it (its last journal commit and
# superblock written back may allocate blocks of the file)
alloc=$(alloc_bytes "$img")
pause_e2trim "$img"
loop=$(loop_attach "$img")
resume_e2trim
assert_rc 10 "a loop device attached (not mounted) during the run"
losetup -d "$loop"
assert_eq "$(alloc_bytes "$img")" "$alloc" "bytes allocated to the image (unmounted case)"

# attached and mounted between two discards: the look between batches
# (once 100 ms have passed since the last) stops the run
pause_mid "$T/mid.img"
loop=$(loop_attach "$T/mid.img")
mount "$loop" "$T/mnt" || fail "mount $loop (mid)"
MOUNTS+=("$T/mnt")
cp "$T/late.src" "$T/mnt/late" || fail "writing through the mount (mid)"
sync
# not a race: a lower bound on elapsed time, so that the next look is due
sleep 0.2
alloc=$(alloc_bytes "$T/mid.img")
resume_e2trim
assert_rc 10 "a loop device attached between discards"
assert_grep "attached to $loop since e2trim opened it; nothing more was discarded" "$ERR" "10's message (mid)"
assert_eq "$(alloc_bytes "$T/mid.img")" "$alloc" "bytes allocated after the stop (nothing more punched)"
umount "$T/mnt" || fail "umount (mid)"
MOUNTS=()
losetup -d "$loop"
e2fsck -fn "$T/mid.img" >/dev/null 2>&1 || fail "e2fsck after (mid)"
debugfs -R "dump /late $T/late.out" "$T/mid.img" >/dev/null 2>&1 || fail "debugfs dump (mid)"
assert_eq "$(sha256sum <"$T/late.out")" "$want" "the file written between discards"
note "a loop device attached between discards: 10, its file intact"

# nothing attached: the same run trims
pause_e2trim -v "$img"
resume_e2trim
assert_rc 0 "no loop device: trimmed"
[ "$(alloc_bytes "$img")" -lt "$alloc" ] || fail "nothing was trimmed"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after the trim"
debugfs -R "dump /late $T/late.out" "$img" >/dev/null 2>&1 || fail "debugfs dump"
assert_eq "$(sha256sum <"$T/late.out")" "$want" "the file after the trim"
exit 0
