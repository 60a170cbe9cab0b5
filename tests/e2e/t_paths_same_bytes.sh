#!/bin/bash
# Every path to the target's bytes is held or refused (issue 41, 1), not
# only the name given: a second loop device over a loop target's backing
# file (attached before the run: held, its mount fails; mounted: 10);
# qemu-io on a loop target's backing file fails to get its write lock
# while e2trim holds the loop device; an image file whose loop device
# is mounted, or open read-write by qemu-nbd: 10; a loop device attached
# through a hard link since removed (sysfs "... (deleted)"): held when
# unused, 10 when written; a process holding the image open O_RDWR: 10
# naming it; a fuse2fs mount (relative source): 10 naming the mount, no
# e2fsck command printed, nothing punched, its file intact.  Oracles: sha of files
# written through mounts, the image's bytes.  Needs root.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

img="$T/fs.img"
mkfs "$img" 64M -t ext4
age "$img" 3
mkdir -p "$T/mnt"

# 1. e2trim on loopA; loopB over the same file, attached before the run:
# held for the run (its mount fails), and the run trims
loopa=$(loop_attach "$img")
loopb=$(loop_attach "$img")
pause_e2trim "$loopa"
if mount "$loopb" "$T/mnt" 2>/dev/null; then
	MOUNTS+=("$T/mnt")
	head -c 4M /dev/urandom >"$T/mnt/late"
	want=$(sha256sum <"$T/mnt/late")
	umount "$T/mnt"
	resume_e2trim
	debugfs -R "dump /late $T/late.out" "$img" >/dev/null 2>&1 ||
		fail "the file written through $loopb is gone"
	assert_eq "$(sha256sum <"$T/late.out")" "$want" "a file written through $loopb"
	fail "$loopb over the same file was mounted while e2trim held $loopa (rc $RC)"
fi
resume_e2trim
assert_rc 0 "loopA with an unused loopB over the same file (held)"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after (1)"
note "a second loop device over the backing file, unused: held (its mount fails)"

# mounted and written: 10 up front naming it, the file survives
mount "$loopb" "$T/mnt" || fail "mount $loopb"
MOUNTS+=("$T/mnt")
head -c 4M /dev/urandom >"$T/mnt/new"
sync
want=$(sha256sum <"$T/mnt/new")
run_e2trim "$loopa"
assert_rc 10 "loopA while loopB over the same file is mounted"
assert_grep "its bytes are also $loopb, which is mounted on $T/mnt" "$ERR" "10 names loopB and its mount"
assert_eq "$(sha256sum <"$T/mnt/new")" "$want" "the file written through $loopb"
umount "$T/mnt" || fail "umount"
MOUNTS=()

# attached during the run, then mounted and written: the look before the
# first discard stops it (10); the file survives
losetup -d "$loopb"
pause_e2trim "$loopa"
loopc=$(loop_attach "$img")
mount "$loopc" "$T/mnt" || fail "mount $loopc"
MOUNTS+=("$T/mnt")
head -c 4M /dev/urandom >"$T/mnt/during"
sync
want=$(sha256sum <"$T/mnt/during")
resume_e2trim
assert_rc 10 "loopC over the same file attached and mounted during the run"
assert_grep "attached to /dev/${loopc##*/} since e2trim opened it" "$ERR" "10 names loopC"
umount "$T/mnt" || fail "umount C"
MOUNTS=()
losetup -d "$loopc"
debugfs -R "dump /during $T/during.out" "$img" >/dev/null 2>&1 || fail "debugfs dump"
assert_eq "$(sha256sum <"$T/during.out")" "$want" "the file written through loopC"
note "a second loop device over the backing file, mounted: 10, its files intact"

# 2. qemu-io on loopA's backing file while e2trim holds loopA: no write lock
if command -v qemu-io >/dev/null; then
	sum=$(sha256sum <"$img")
	pause_e2trim "$loopa"
	qemu-io -f raw -c 'write -P 0x55 0 4096' "$img" >"$T/qio" 2>&1 &&
		fail "qemu-io wrote $img while e2trim held $loopa"
	assert_grep 'Failed to get .*write.* lock' "$T/qio" "qemu-io's lock error"
	resume_e2trim
	assert_rc 0 "loopA trimmed while qemu-io was kept out"
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after (2)"
	note "qemu-io on the backing file of the loop target: no write lock"
else
	left_out "qemu-io not installed"
fi

# 3. the image file while its loop device is mounted, or open read-write
# by qemu-nbd (the loop device named directly is refused 26 for that)
mount "$loopa" "$T/mnt" || fail "mount $loopa"
MOUNTS+=("$T/mnt")
run_e2trim -n "$img"
assert_rc 10 "the image file under a mounted loop device"
umount "$T/mnt" || fail "umount A"
MOUNTS=()
if command -v qemu-nbd >/dev/null; then
	qemu-nbd --fork -f raw --persistent --pid-file="$T/nbd.pid" \
		-k "$T/nbd.sock" "$loopa" || fail "qemu-nbd on $loopa"
	pid=$(cat "$T/nbd.pid")
	PIDS+=("$pid")
	sum=$(sha256sum <"$img")
	run_e2trim "$img"
	assert_rc 10 "the image file under a loop device qemu-nbd writes"
	assert_grep "$loopa is open for writing by qemu-nbd, pid $pid" "$ERR" "10 names qemu-nbd"
	assert_eq "$(sha256sum <"$img")" "$sum" "the image under qemu-nbd"
	kill "$pid"; wait_exit "$pid" qemu-nbd
	note "the image file under a loop device in use: 10"
else
	left_out "qemu-nbd not installed"
fi
losetup -d "$loopa"

# 4. a loop device attached through a hard link since removed
ln "$img" "$T/link.img"
loopd=$(loop_attach "$T/link.img")
rm "$T/link.img"
grep -q '(deleted)' "/sys/block/${loopd##*/}/loop/backing_file" ||
	fail "sysfs does not say the link was removed"
pause_e2trim "$img"
mount "$loopd" "$T/mnt" 2>/dev/null && { MOUNTS+=("$T/mnt"); fail "$loopd (a removed link to the image) mounted during the run"; }
resume_e2trim
assert_rc 0 "the image with an unused loop device through a removed link (held)"
mkfifo "$T/w.in" "$T/w.out"
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
open(sys.argv[2], "w").write("open\n")
open(sys.argv[3]).read()' "$loopd" "$T/w.out" "$T/w.in" &
writer=$!
read -r line <"$T/w.out"
[ "$line" = open ] || fail "the writer of $loopd did not start"
sum=$(sha256sum <"$img")
run_e2trim "$img"
assert_rc 10 "the image with a loop device through a removed link, open for writing"
assert_grep "$loopd is open for writing by python3, pid $writer" "$ERR" "10 names the writer"
echo >"$T/w.in"
wait "$writer"
assert_eq "$(sha256sum <"$img")" "$sum" "the image (removed link)"
losetup -d "$loopd"
note "a loop device through a removed link: held unused, 10 written"

# 5. a process holding the image open read-write
mkfifo "$T/x.in" "$T/x.out"
(
	exec 3<>"$img"
	echo open >"$T/x.out"
	read -r _ <"$T/x.in"
) &
holder=$!
read -r line <"$T/x.out"
[ "$line" = open ] || fail "the holder did not start"
run_e2trim -n "$img"
assert_rc 10 "a process holding the image O_RDWR"
assert_grep "$img is open for writing by bash, pid $holder" "$ERR" "10 names the process"
echo >"$T/x.in"
wait "$holder"
note "a process holding the image for writing: 10"

# 6. fuse2fs with a relative source: 10 naming the mount, no e2fsck
if command -v fuse2fs >/dev/null && [ -c /dev/fuse ]; then
	# fuse2fs returns once mounted (it daemonizes after the mount)
	(cd "$T" && fuse2fs fs.img mnt >/dev/null) || fail "fuse2fs"
	MOUNTS+=("$T/mnt")
	head -c 4M /dev/urandom >"$T/fuse.src"
	cp "$T/fuse.src" "$T/mnt/viafuse" || fail "writing through fuse2fs"
	sync
	want=$(sha256sum <"$T/fuse.src")
	# fuse2fs itself writes the image while mounted: nothing punched is
	# what e2trim must leave (the allocated bytes), and the file
	alloc=$(alloc_bytes "$img")
	run_e2trim "$img"
	assert_rc 10 "a fuse2fs mount of the image"
	assert_eq "$(alloc_bytes "$img")" "$alloc" "bytes allocated under fuse2fs (nothing punched)"
	assert_grep "mounted through FUSE (fuse.ext4) on $T/mnt by fuse2fs" "$ERR" "10 names the mount"
	grep -q e2fsck "$ERR" && fail "a repair command printed for a live filesystem: $(cat "$ERR")"
	fpid=$(sed -n 's/.* by fuse2fs, pid \([0-9]*\).*/\1/p' "$ERR")
	[ -n "$fpid" ] || fail "no fuse2fs pid in the message"
	umount "$T/mnt" || fail "umount fuse2fs"
	MOUNTS=()
	# the daemon writes the superblock back after umount returns
	wait_exit "$fpid" fuse2fs
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after the fuse2fs mount"
	debugfs -R "dump /viafuse $T/fuse.out" "$img" >/dev/null 2>&1 || fail "debugfs dump (fuse)"
	assert_eq "$(sha256sum <"$T/fuse.out")" "$want" "the file written through fuse2fs"
	note "a fuse2fs mount (relative source): 10 naming the mount, no e2fsck command"
else
	left_out "fuse2fs or /dev/fuse missing (apt-get install fuse2fs)"
fi
finish
