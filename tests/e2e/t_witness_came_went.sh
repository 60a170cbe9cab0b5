#!/bin/bash
# A writer that came and went while e2trim ran (issue 41.2): a loop device
# attached, mounted, written, unmounted and detached between e2trim's
# plan and its discards leaves no loop device for the loop look to see;
# it leaves its trace in the superblock and the group descriptors (mount
# count and time, free counts), which e2trim reads again before the first
# discard and before each batch.  The run stops with 26, the file written
# through the mount is intact (sha256 via debugfs dump) and e2fsck -fn is
# clean.  Cases: an image file held at trimming@start and between two
# discards; a loop device as the target, written through a second loop
# device over the same backing file (its own page cache never sees that
# write: the witness reads with O_DIRECT); an MMP filesystem; the image
# untouched by a writer still trims (no false alarm).  Held at pause
# points by the test hook (a FIFO handshake), not by timing.  Needs root.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

mkdir -p "$T/mnt"
head -c 24M /dev/urandom >"$T/late.src"
want=$(sha256sum <"$T/late.src")

# came_and_went IMG: attach IMG, mount it, write the file, unmount, detach
came_and_went() {
	local loop
	loop=$(loop_attach "$1")
	mount "$loop" "$T/mnt" || fail "mount $loop"
	MOUNTS+=("$T/mnt")
	cp "$T/late.src" "$T/mnt/late" || fail "writing through the mount"
	unmount_loop "$T/mnt" "$loop"
}

# kept IMG WHAT: the file written meanwhile survived, the filesystem is clean
kept() {
	e2fsck -fn "$1" >/dev/null 2>&1 || fail "e2fsck -fn after ($2)"
	rm -f "$T/late.out"
	debugfs -R "dump /late $T/late.out" "$1" >/dev/null 2>&1 ||
		fail "debugfs dump ($2)"
	assert_eq "$(sha256sum <"$T/late.out")" "$want" "the file written meanwhile ($2)"
}

# -- an image file, between the plan and the first discard
img="$T/fs.img"
mkfs "$img" 128M -t ext4
age "$img" 4
pause_e2trim -v "$img"
came_and_went "$img"
alloc=$(alloc_bytes "$img")
resume_e2trim
assert_rc 26 "a writer came and went before the first discard"
assert_grep "changed since e2trim read it" "$ERR" "26's message says what changed"
assert_grep "and nothing more was discarded" "$ERR" "26's message"
assert_eq "$(alloc_bytes "$img")" "$alloc" "bytes allocated to the image (nothing punched)"
kept "$img" "before the first discard"
note "image: a writer that came and went before the first discard: 26, its file intact"

# -- an image file, between two discards (the look before each batch)
pause_mid "$T/mid.img"
came_and_went "$T/mid.img"
# not a race: a lower bound on elapsed time, so that the next look is due
sleep 0.2
alloc=$(alloc_bytes "$T/mid.img")
resume_e2trim
assert_rc 26 "a writer came and went between two discards"
assert_grep "changed since e2trim read it" "$ERR" "26's message (mid)"
assert_eq "$(alloc_bytes "$T/mid.img")" "$alloc" "bytes allocated after the stop (nothing more punched)"
kept "$T/mid.img" "between two discards"
note "image: a writer that came and went between two discards: 26, its file intact"

# -- a loop device as the target; the writer is a second loop device over
# its backing file (loopA's own page cache keeps the old superblock)
mkfs "$T/dev.img" 128M -t ext4
age "$T/dev.img" 6
dev=$(loop_attach "$T/dev.img")
pause_e2trim -v "$dev"
came_and_went "$T/dev.img"
resume_e2trim
assert_rc 26 "a writer through a second loop device came and went"
assert_grep "changed since e2trim read it" "$ERR" "26's message (loop device)"
losetup -d "$dev"
LOOPS=()
kept "$T/dev.img" "loop device target"
note "loop device: a writer through another loop device came and went: 26, its file intact"

# -- MMP: e2trim's own MMP block (written at open) is no writer's trace
mkfs "$T/mmp.img" 64M -t ext4 -O mmp -E mmp_update_interval=1
pause_e2trim -v "$T/mmp.img"
resume_e2trim
assert_rc 0 "MMP, no other writer: trimmed"
e2fsck -fn "$T/mmp.img" >/dev/null 2>&1 || fail "e2fsck after (MMP)"

# -- no writer: the same run trims, the looks counted
alloc=$(alloc_bytes "$img")
pause_e2trim -v "$img"
resume_e2trim
assert_rc 0 "no writer: trimmed"
[ "$(alloc_bytes "$img")" -lt "$alloc" ] || fail "nothing was trimmed"
kept "$img" "after the trim"
note "no writer: trimmed, no false alarm"

# -- meta_bg: the descriptor blocks scattered, one per 16 groups here
# (1 200 groups, 64-byte descriptors in 1 KiB blocks: 75 of them), each
# read again on its own, never what lies between (t_slow_huge_fs found
# one range spanning the whole filesystem: 281 083 904 bytes a look on
# 520 MiB)
mkfs "$T/meta.img" 300M -t ext4 -b 1024 -g 256 -N 4096 -O meta_bg,^resize_inode
E2TRIM_TIME_WITNESS=1 run_e2trim -v "$T/meta.img"
assert_rc 0 "meta_bg with 75 descriptor blocks apart: a real run"
# each look reads the superblock and the 75 descriptor blocks: 77 824 bytes
read -r n b < <(sed -n 's/.*witness reads: \([0-9]*\), \([0-9]*\) bytes.*/\1 \2/p' "$ERR")
[ "${n:-0}" -gt 0 ] || { cat "$ERR"; fail "meta_bg: no witness reads reported"; }
assert_eq "$((b / n))" 77824 "meta_bg: bytes read again per look (the superblock and 75 descriptor blocks, nothing between)"
e2fsck -fn "$T/meta.img" >/dev/null 2>&1 || fail "e2fsck after (meta_bg)"
note "meta_bg, 75 descriptor blocks apart: each read again alone"
exit 0
