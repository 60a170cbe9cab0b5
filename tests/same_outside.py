#!/usr/bin/env python3
"""same_outside.py OLD NEW EXTENTS_FILE GRANULARITY

Checks that NEW differs from OLD nowhere outside the extents listed in
EXTENTS_FILE ("start length" in bytes), each trimmed inward to
GRANULARITY: a trim must change nothing it did not plan to.
"""
import sys

old, new, ext_file, gran = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
spans = []
for line in open(ext_file):
    if line.strip():
        s, n = map(int, line.split())
        a, b = -(-s // gran) * gran, (s + n) // gran * gran
        if b > a:
            spans.append((a, b))
spans.sort()

with open(old, "rb") as fo, open(new, "rb") as fn:
    fo.seek(0, 2); size = fo.tell()
    pos = 0
    for a, b in spans + [(size, size)]:
        fo.seek(pos); fn.seek(pos)
        while pos < a:
            n = min(a - pos, 1 << 20)
            if fo.read(n) != fn.read(n):
                print(f"changed outside the plan near byte {pos}")
                sys.exit(1)
            pos += n
        pos = max(pos, b)
print("ok")
