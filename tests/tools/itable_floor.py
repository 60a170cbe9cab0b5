#!/usr/bin/env python3
"""The floor for reading inode tables: read exactly the byte ranges of
every group's inode table (as dumpe2fs lists them, contiguous tables
joined) with large sequential reads, one at a time, and print the
seconds.  Usage: itable_floor.py DEVICE_OR_IMAGE [CHUNK_MIB]"""
import os
import re
import subprocess
import sys
import time

dev = sys.argv[1]
chunk = int(sys.argv[2] if len(sys.argv) > 2 else 4) << 20
out = subprocess.run(["dumpe2fs", dev], capture_output=True, text=True,
                     check=True).stdout
bs = int(re.search(r"^Block size:\s+(\d+)", out, re.M).group(1))
ranges = []
for a, b in re.findall(r"Inode table at (\d+)-(\d+)", out):
    a, b = int(a), int(b) + 1
    if ranges and ranges[-1][1] == a:
        ranges[-1][1] = b
    else:
        ranges.append([a, b])
total = sum(b - a for a, b in ranges) * bs
fd = os.open(dev, os.O_RDONLY)
t = time.monotonic()
for a, b in ranges:
    pos, end = a * bs, b * bs
    while pos < end:
        n = len(os.pread(fd, min(chunk, end - pos), pos))
        if n <= 0:
            sys.exit(f"{dev}: short read at byte {pos}")
        pos += n
dt = time.monotonic() - t
print(f"{dt:.3f} s: {len(ranges)} ranges, {total >> 20} MiB")
