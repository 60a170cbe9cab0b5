#!/bin/bash
# tests/mkaged.sh IMG SIZE_MB [SEED]: the benches' "aged" ext4 image, the
# same bytes for the same arguments (same e2fsprogs), whoever runs it.
#
# What it is (as ../shared/bench/mkaged.sh meant it): written full once,
# then many files of mixed sizes (log-normal, median ~22 KiB, at most
# 64 MiB, in 37 directories, 70 % of the free space), half of them
# deleted, so that the free space is fragmented and every block of the
# image file is allocated (the free blocks read 0x5a, the files' 0xa5).
#
# How, and why not as the shared script does: that one mounts the image
# and lets the kernel place the files.  mke2fs gives the filesystem a
# random UUID and directory hash seed, the kernel's Orlov allocator places
# top-level directories by that hash (or at random), and writeback order
# and per-CPU preallocation move the files' blocks: the same seed made 535
# free extents once and 547 another time.  Here nothing is mounted:
# libext2fs places everything, deterministically.
#  - the image file is written full of 0x5a first (every block allocated);
#  - mke2fs -d copies the files from a folder made here (sizes from
#    Python's random.Random(SEED); mke2fs sorts each folder's names), with
#    a fixed UUID and hash seed, fixed times (E2FSPROGS_FAKE_TIME and the
#    files' own), nodiscard, tables and journal written now;
#  - debugfs sets every copied inode's ctime (mke2fs -d takes the
#    source's, which only the clock sets) and removes half of the files
#    (random.Random(SEED).sample), its clock set (set_current_time), so
#    that the deletion times are fixed too.
# Needs root only to write IMG where it is; no loop device, no mount.
set -euo pipefail
img=$1 size=$2 seed=${3:-1}
export PATH=$PATH:/sbin:/usr/sbin
# 2026-01-01 00:00:00 UTC, every time any tool stamps
stamp=1767225600
export E2FSPROGS_FAKE_TIME=$stamp
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/mkaged.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fill() {	# the whole image file, 0x5a, every block allocated
	rm -f "$img"
	python3 - "$img" "$size" <<'PY'
import sys
b = b"\x5a" * (1 << 20)
with open(sys.argv[1], "wb") as f:
    for _ in range(int(sys.argv[2])):
        f.write(b)
PY
}
mkfs() {	# [-d FOLDER]
	mke2fs -q -F -t ext4 -U 6b1f2e3a-0000-4000-8000-00000000a9ed \
		-E hash_seed=6b1f2e3a-0000-4000-8000-0000000015ed,nodiscard,lazy_itable_init=0,lazy_journal_init=0 \
		"$@" "$img"
}

# the space the files may take: 70 % of what a user could write
fill
mkfs
budget=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '
	/^Free blocks/ { f = $2 } /^Reserved block count/ { r = $2 }
	/^Block size/ { b = $2 } END { printf "%d\n", (f - r) * b * 0.7 }')

# the files, sizes drawn from SEED; the list of those to delete
python3 - "$tmp/src" "$seed" "$budget" "$stamp" >"$tmp/rm.txt" <<'PY'
import os, random, sys
src, seed, budget, stamp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = random.Random(seed)
files, used, i = [], 0, 0
chunk = b"\xa5" * (1 << 20)
while used < budget:
    sz = int(min(r.lognormvariate(10, 2.2), 64 << 20))
    d = "d%02d" % (i % 37)
    os.makedirs(os.path.join(src, d), exist_ok=True)
    p = os.path.join(d, "f%06d" % i)
    with open(os.path.join(src, p), "wb") as f:
        left = sz
        while left:
            n = min(left, len(chunk))
            f.write(chunk[:n])
            left -= n
    os.utime(os.path.join(src, p), (stamp, stamp))
    files.append(p)
    used += sz
    i += 1
for d in os.listdir(src):
    os.utime(os.path.join(src, d), (stamp, stamp))
os.utime(src, (stamp, stamp))
print("set_current_time @%d" % stamp)
# mke2fs -d copies each file's ctime, which only the clock sets: fix it
for d in sorted(os.listdir(src)):
    print("sif /%s ctime @%d" % (d, stamp))
for p in files:
    print("sif /%s ctime @%d" % (p, stamp))
for p in sorted(r.sample(files, len(files) // 2)):
    print("rm /" + p)
with open(os.path.join(os.path.dirname(src), "stats"), "w") as f:
    print("files", len(files), "kept", len(files) - len(files) // 2, file=f)
PY

fill
mkfs -d "$tmp/src"
debugfs -w -f "$tmp/rm.txt" "$img" >/dev/null 2>&1
# what e2fsck finds (and must find nothing to fix)
e2fsck -fn "$img" >/dev/null 2>&1
cat "$tmp/stats"
