#!/usr/bin/env python3
"""holes.py IMAGE EXTENTS_FILE GRANULARITY

Checks, independently of e2trim, that every extent listed in EXTENTS_FILE
("start length" in bytes per line) is, once trimmed inward to GRANULARITY,
all zero bytes and a hole in IMAGE (SEEK_DATA finds no data inside it).
Prints the number of bytes checked; exits 1 at the first extent that is not.
"""
import os
import sys

img, ext_file, gran = sys.argv[1], sys.argv[2], int(sys.argv[3])
checked = 0
fd = os.open(img, os.O_RDONLY)
with open(ext_file) as f:
    for line in f:
        if not line.strip():
            continue
        s, n = map(int, line.split())
        a = -(-s // gran) * gran
        b = (s + n) // gran * gran
        if b <= a:
            continue
        try:
            d = os.lseek(fd, a, os.SEEK_DATA)
        except OSError:
            d = None            # ENXIO: nothing but hole up to EOF
        if d is not None and d < b:
            print(f"data at {d} inside trimmed extent {a}+{b - a}")
            sys.exit(1)
        os.lseek(fd, a, os.SEEK_SET)
        left = b - a
        while left:
            buf = os.read(fd, min(left, 1 << 20))
            if buf.count(0) != len(buf):
                print(f"non-zero byte in trimmed extent {a}+{b - a}")
                sys.exit(1)
            left -= len(buf)
        checked += b - a
print(checked)
