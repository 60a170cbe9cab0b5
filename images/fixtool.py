#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fixtool.py - the byte-level steps of images/mkimages.sh

Everything here is deterministic: random numbers come from a seeded
random.Random, and nothing reads the clock, the host name or the machine.
Only the Python standard library is used.

  fixtool.py age-script IMG SEED FRACTION DIR [extents]
        print a debugfs script that writes files (blobs made in DIR) until
        about FRACTION of the free space is used, then removes about half
        of them and punches holes into some of the rest (with "extents",
        fallocates some holes again), so the free space ends up fragmented
  fixtool.py edge-files IMG MAX
        print debugfs "rm" commands for up to MAX files that run across a
        block group edge, so that the free space they leave crosses it
  fixtool.py fill-free IMG BYTE
        write BYTE over every free block (dumpe2fs "Free blocks:")
  fixtool.py fill-range IMG OFFSET LENGTH BYTE
  fixtool.py mmp IMG SEQ NODENAME BDEVNAME
        rewrite the MMP block with fixed fields and a correct checksum
        (mke2fs and debugfs put the host name and the clock there)
  fixtool.py gd-flags IMG GROUP OR-MASK
        OR bits into a group descriptor's bg_flags, checksum left stale
  fixtool.py bitmap-byte IMG GROUP BYTE-INDEX VALUE
        overwrite one byte of a group's block bitmap, checksum left stale
  fixtool.py random IMG SIZE SEED
  fixtool.py xfs IMG SIZE
        a file that starts with an XFS superblock ("XFSB"), zeros elsewhere
"""
import os
import random
import re
import struct
import subprocess
import sys

SB_OFF = 1024


def crc32c_raw(crc, data, _table=[]):
    """ext2fs_crc32c_le(): reflected CRC32-C without pre/post inversion."""
    if not _table:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
            _table.append(c)
    for b in data:
        crc = _table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


class Super:
    """The few superblock fields the fix-ups need, read from the image."""

    def __init__(self, path):
        with open(path, "rb") as f:
            f.seek(SB_OFF)
            sb = f.read(1024)
        (magic,) = struct.unpack_from("<H", sb, 0x38)
        if magic != 0xEF53:
            sys.exit(f"{path}: no ext2/3/4 superblock")
        self.first_data_block = struct.unpack_from("<I", sb, 0x14)[0]
        self.block_size = 1024 << struct.unpack_from("<I", sb, 0x18)[0]
        self.incompat = struct.unpack_from("<I", sb, 0x60)[0]
        self.ro_compat = struct.unpack_from("<I", sb, 0x64)[0]
        self.uuid = sb[0x68:0x78]
        desc_size = struct.unpack_from("<H", sb, 0xFE)[0]
        self.is64 = bool(self.incompat & 0x80)
        self.desc_size = desc_size if self.is64 and desc_size else 32
        self.meta_bg = bool(self.incompat & 0x10)
        self.mmp_block = struct.unpack_from("<Q", sb, 0x168)[0]
        self.csum_seed_sb = struct.unpack_from("<I", sb, 0x270)[0]
        self.metadata_csum = bool(self.ro_compat & 0x400)
        if self.incompat & 0x2000:		# csum_seed
            self.csum_seed = self.csum_seed_sb
        else:
            self.csum_seed = crc32c_raw(0xFFFFFFFF, self.uuid)

    def desc_offset(self, group):
        if self.meta_bg:
            sys.exit("gd fix-ups do not handle meta_bg")
        gdt = (self.first_data_block + 1) * self.block_size
        return gdt + group * self.desc_size


def dumpe2fs(img, header=False):
    args = ["dumpe2fs"] + (["-h"] if header else []) + [img]
    return subprocess.run(args, check=True, capture_output=True,
                          text=True).stdout


def free_ranges(img):
    """Free block ranges, widened to whole clusters on bigalloc."""
    return parse_free_ranges(dumpe2fs(img))


def parse_free_ranges(out):
    """(block size, first, last) of each "Free blocks:" range in dumpe2fs
    output OUT; on bigalloc dumpe2fs names a free cluster by its first
    block, so each range is widened to the cluster's last block."""
    bs = int(re.search(r"^Block size:\s+(\d+)", out, re.M).group(1))
    count = int(re.search(r"^Block count:\s+(\d+)", out, re.M).group(1))
    m = re.search(r"^Cluster size:\s+(\d+)", out, re.M)
    ratio = int(m.group(1)) // bs if m else 1
    for line in re.findall(r"^  Free blocks: (.*)$", out, re.M):
        for r in line.split(","):
            r = r.strip()
            if not r:
                continue
            a, _, b = r.partition("-")
            a = int(a)
            b = int(b) if b else a
            yield bs, a, min(b + ratio - 1, count - 1)


def fill(path, off, length, byte):
    chunk = bytes([byte]) * (1 << 20)
    with open(path, "r+b") as f:
        f.seek(off)
        while length > 0:
            n = min(length, len(chunk))
            f.write(chunk[:n])
            length -= n


def cmd_fill_free(img, byte):
    for bs, a, b in free_ranges(img):
        fill(img, a * bs, (b - a + 1) * bs, int(byte, 0))


def cmd_fill_range(img, off, length, byte):
    fill(img, int(off, 0), int(length, 0), int(byte, 0))


def cmd_age_script(img, seed, fraction, blobdir, extents=""):
    hdr = dumpe2fs(img, header=True)
    bs = int(re.search(r"^Block size:\s+(\d+)", hdr, re.M).group(1))
    free = int(re.search(r"^Free blocks:\s+(\d+)", hdr, re.M).group(1))
    rng = random.Random(int(seed))
    budget = int(free * bs * float(fraction))
    out = ["set_current_time @1700000000", "mkdir d1", "mkdir d2"]
    names = []
    i = 0
    while True:
        kind = rng.randrange(10)
        if kind < 5:
            nblk = rng.randint(1, 16)		# small files
        elif kind < 9:
            nblk = rng.randint(17, 256)		# medium
        else:
            nblk = rng.randint(257, 1536)	# a few large ones
        size = nblk * bs - rng.randrange(bs)	# a partial last block
        if size > budget:
            break
        budget -= size + bs			# roughly, with metadata
        name = f"{('', 'd1/', 'd2/')[i % 3]}f{i}"
        blob = os.path.join(blobdir, f"blob{i}")
        with open(blob, "wb") as f:
            f.write(bytes([0x10 + i % 0xE0]) * size)
        out.append(f"write {blob} {name}")
        names.append((name, nblk))
        i += 1
    kept = []
    for name, nblk in names:
        if rng.randrange(2):
            out.append(f"rm {name}")
        else:
            kept.append((name, nblk))
    # holes inside surviving files: short free runs next to used blocks;
    # with extents, some holes get unwritten extents again (allocated,
    # so not free, though they read as zeros)
    n = 0
    for name, nblk in kept:
        if nblk >= 8 and rng.randrange(4) == 0:
            a = rng.randrange(1, nblk - 4)
            b = a + rng.randrange(0, 3)
            out.append(f"punch {name} {a} {b}")
            n += 1
            if extents and n % 3 == 0:
                out.append(f"fallocate {name} {a} {b}")
    print("\n".join(out))


def debugfs_r(img, request):
    return subprocess.run(["debugfs", "-R", request, img], check=True,
                          capture_output=True, text=True).stdout


def cmd_edge_files(img, most):
    hdr = dumpe2fs(img, header=True)
    field = lambda f: int(re.search(rf"^{f}:\s+(\d+)", hdr, re.M).group(1))
    count, fdb = field("Block count"), field("First block")
    bpg = field("Blocks per group")
    edges = list(range(fdb + bpg, count, bpg))
    if not edges:
        return
    out = debugfs_r(img, "icheck " + " ".join(f"{e - 1} {e}" for e in edges))
    owner = {}
    for line in out.splitlines():
        m = re.match(r"^(\d+)\s+(\d+)$", line.strip())
        if m:
            owner[int(m.group(1))] = int(m.group(2))
    done = []
    for e in edges:
        ino = owner.get(e - 1)
        if ino and ino > 11 and owner.get(e) == ino and ino not in done:
            done.append(ino)
            if len(done) == int(most):
                break
    for ino in done:
        path = debugfs_r(img, f"ncheck {ino}").splitlines()[-1].split()[-1]
        print(f"rm /{path.lstrip('/')}")


def cmd_mmp(img, seq, nodename, bdevname):
    sb = Super(img)
    if not sb.mmp_block:
        sys.exit(f"{img}: no MMP block")
    off = sb.mmp_block * sb.block_size
    with open(img, "r+b") as f:
        f.seek(off)
        mmp = bytearray(f.read(1024))
        magic, = struct.unpack_from("<I", mmp, 0)
        if magic != 0x004D4D50:
            sys.exit(f"{img}: bad MMP magic {magic:#x}")
        struct.pack_into("<I", mmp, 4, int(seq, 0))
        struct.pack_into("<Q", mmp, 8, 1700000000)
        mmp[16:80] = nodename.encode().ljust(64, b"\0")[:64]
        mmp[80:112] = bdevname.encode().ljust(32, b"\0")[:32]
        csum = crc32c_raw(sb.csum_seed, bytes(mmp[:1020])) \
            if sb.metadata_csum else 0
        struct.pack_into("<I", mmp, 1020, csum)
        f.seek(off)
        f.write(mmp)


def cmd_gd_flags(img, group, mask):
    sb = Super(img)
    off = sb.desc_offset(int(group)) + 0x12
    with open(img, "r+b") as f:
        f.seek(off)
        flags, = struct.unpack("<H", f.read(2))
        f.seek(off)
        f.write(struct.pack("<H", flags | int(mask, 0)))


def cmd_bitmap_byte(img, group, index, value):
    sb = Super(img)
    with open(img, "r+b") as f:
        f.seek(sb.desc_offset(int(group)))
        d = f.read(sb.desc_size)
        blk = struct.unpack_from("<I", d, 0)[0]
        if sb.desc_size >= 64:
            blk |= struct.unpack_from("<I", d, 0x20)[0] << 32
        f.seek(blk * sb.block_size + int(index, 0))
        f.write(bytes([int(value, 0)]))


def cmd_random(img, size, seed):
    rng = random.Random(int(seed))
    with open(img, "wb") as f:
        f.write(rng.randbytes(int(size, 0)))


def cmd_xfs(img, size):
    # The first fields of an XFS superblock: magic, block size, data
    # blocks, and the UUID; the rest zeros, as blkid needs no more.
    sb = struct.pack(">4sIQQQ16s", b"XFSB", 4096, int(size, 0) // 4096,
                     0, 0, bytes(range(16)))
    with open(img, "wb") as f:
        f.truncate(int(size, 0))
        f.write(sb)


COMMANDS = {
    "age-script": cmd_age_script,
    "edge-files": cmd_edge_files,
    "fill-free": cmd_fill_free,
    "fill-range": cmd_fill_range,
    "mmp": cmd_mmp,
    "gd-flags": cmd_gd_flags,
    "bitmap-byte": cmd_bitmap_byte,
    "random": cmd_random,
    "xfs": cmd_xfs,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
