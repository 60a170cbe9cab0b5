#!/bin/bash
# No false refusals on filesystems the kernel wrote: each is mounted
# through a loop device and filled the way people do (small files and
# big ones, extent trees grown by interleaved fsyncs, sparse files,
# preallocated unwritten extents, xattrs in blocks and in EA inodes,
# inline data, fast and slow symlinks, hard links, fifos, devices, a
# directory large enough for an htree, casefolded or encrypted where the
# kernel can, half the small files deleted),
# then unmounted.  e2fsck -fn is clean; e2trim verifies clean and trims;
# e2fsck -fn is still clean and every file reads back the same.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

populate() {	# mount point, seed
	python3 - "$1" "$2" <<'PY'
import os, random, stat, sys
root, seed = sys.argv[1], int(sys.argv[2])
r = random.Random(seed)
def data(n):
    return bytes(r.getrandbits(8) for _ in range(min(n, 4096))) * (n // 4096 + 1)
small = []
for d in range(8):
    dp = os.path.join(root, "d%d" % d)
    os.mkdir(dp)
    for i in range(150):
        p = os.path.join(dp, "s%03d" % i)
        with open(p, "wb") as f:
            f.write(data(r.choice([0, 20, 50, 300, 3000, 9000, 70000]))[:r.randint(0, 70000)])
        small.append(p)
# two files written in turns, each chunk forced to disk: many extents
with open(os.path.join(root, "frag1"), "wb") as a, \
     open(os.path.join(root, "frag2"), "wb") as b:
    for k in range(300):
        for f in (a, b):
            f.write(data(8192)[:8192]); f.flush(); os.fsync(f.fileno())
with open(os.path.join(root, "big"), "wb") as f:
    f.write(data(6 << 20)[:6 << 20])
with open(os.path.join(root, "sparse"), "wb") as f:
    for off in (0, 1 << 20, 5 << 20, 40 << 20):
        f.seek(off); f.write(data(12288)[:12288])
fd = os.open(os.path.join(root, "prealloc"), os.O_CREAT | os.O_WRONLY)
os.posix_fallocate(fd, 0, 3 << 20); os.close(fd)
for name, size in (("xattr-block", 1500), ("xattr-inode", 20000)):
    p = os.path.join(root, name)
    open(p, "w").write("x")
    try:
        os.setxattr(p, "user.v", data(size)[:size])
    except OSError:
        pass	# no ea_inode: the value does not fit a block
os.symlink("/short", os.path.join(root, "fast"))
os.symlink("/" + "long/" * 60 + "target", os.path.join(root, "slow"))
os.link(os.path.join(root, "big"), os.path.join(root, "big-link"))
os.mkfifo(os.path.join(root, "fifo"))
os.mknod(os.path.join(root, "null"), stat.S_IFCHR | 0o600, os.makedev(1, 3))
dp = os.path.join(root, "htree"); os.mkdir(dp)
# casefolded, where the filesystem has the feature (chattr +F fails else)
import subprocess
subprocess.run(["chattr", "+F", dp], stderr=subprocess.DEVNULL)
for i in range(3000):
    open(os.path.join(dp, "entry-with-a-long-name-%05d" % i), "w").close()
for p in r.sample(small, len(small) // 2):
    os.unlink(p)
PY
}

# manifest DIR: a digest of every regular file, by path
manifest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum); }

kernel_fs() {	# name size mke2fs-options...
	local name=$1 size=$2; shift 2
	local img=$T/$name.img mnt=$T/mnt dev
	mkfs "$img" "$size" "$@"
	fill_free "$img"	# so that trimming frees something in the image
	mkdir -p "$mnt"
	dev=$(loop_attach "$img")
	mount ${MOUNT_OPTS:+-o "$MOUNT_OPTS"} "$dev" "$mnt" || fail "$name: mount"
	MOUNTS+=("$mnt")
	populate "$mnt" 3 || fail "$name: populate"
	manifest "$mnt" >"$T/before"
	unmount_loop "$mnt" "$dev"

	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$name: e2fsck -fn after the kernel"; }
	run_e2trim -n -v "$img"
	assert_rc 0 "$name: dry run"
	run_e2trim -v "$img"
	assert_rc 0 "$name: trim"
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$name: e2fsck -fn after the trim"; }

	dev=$(loop_attach "$img")
	mount -o "ro${MOUNT_OPTS:+,$MOUNT_OPTS}" "$dev" "$mnt" || fail "$name: mount after the trim"
	MOUNTS+=("$mnt")
	manifest "$mnt" >"$T/after"
	unmount_loop "$mnt" "$dev"
	cmp -s "$T/before" "$T/after" || fail "$name: files differ after the trim"
	note "$name: $(wc -l <"$T/before") files, $(grep -o '([0-9]* bytes) trimmed' "$OUT")"
	rm -f "$img"
}

kernel_fs ext4 160M -t ext4 -O orphan_file,ea_inode
kernel_fs ext4-inline 160M -t ext4 -O inline_data
# casefolded and encrypted directories, where this kernel has them
# (test_dummy_encryption encrypts every new file without a key).  A
# kernel without casefold leaves the case to tests/boot/t_kernel_casefold.sh
# (make check-boot), which boots Debian's kernel (CONFIG_UNICODE) to
# write the casefolded htree: not left out here, checked there.
if [ -e /sys/fs/ext4/features/casefold ]; then
	kernel_fs ext4-casefold 160M -t ext4 -O casefold
else
	note "ext4-casefold: no casefold in this kernel; tests/boot/t_kernel_casefold.sh (make check-boot) checks it under Debian's kernel"
fi
if [ -e /sys/fs/ext4/features/test_dummy_encryption_v2 ]; then
	MOUNT_OPTS=test_dummy_encryption kernel_fs ext4-encrypt 160M -t ext4 -O encrypt
else
	left_out "ext4-encrypt: this kernel has no test_dummy_encryption"
fi
kernel_fs ext3 160M -t ext3
kernel_fs ext2-1k 160M -t ext2 -b 1024
kernel_fs ext4-1k-noflex 160M -t ext4 -b 1024 -O ^flex_bg
kernel_fs ext4-bigalloc 256M -t ext4 -O bigalloc -C 65536 -N 8192
finish
