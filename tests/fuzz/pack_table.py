#!/usr/bin/env python3
"""pack_table.py IMG OUT [PARTNO] - a disk image as fuzz_partition's input

The image's size in sectors, the partition number for -p, then every
sector that is not all zeroes (sector number, its 512 bytes): what a
partition table and the superblocks behind it are made of.
"""
import struct
import sys

SS = 512


def main(img, out, partno=1):
    with open(img, "rb") as f, open(out, "wb") as o:
        f.seek(0, 2)
        o.write(struct.pack("<IB", f.tell() // SS, partno))
        f.seek(0)
        n = 0
        while True:
            sec = f.read(SS)
            if len(sec) < SS:
                break
            if sec.count(0) != SS:
                o.write(struct.pack("<I", n) + sec)
            n += 1


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], *[int(a) for a in sys.argv[3:]])
