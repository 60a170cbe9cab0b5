#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""pack.py [--fix-csums] IMAGE OUT - turn a filesystem image into a fuzz input

The fuzz target (fuzz_open_plan.c) does not take raw images: the fixtures
are 16 to 128 MiB, almost all of it file data and free space that e2trim
never reads, and a mutation that lands there is wasted.  Its input is

    u32 le   image size in bytes (the target caps it at 128 MiB); bit 31
             set (--fix-csums): the target fixes checksums after mutating
    then records, until the input ends:
    u32 le   offset in KiB
    u16 le   length in KiB
    bytes    the payload (a short last one is zero-padded)

and everything no record covers reads as zeros.  This keeps every 1 KiB
unit that is not filled with one repeated byte (metadata: superblocks,
descriptors, bitmaps, inode tables, directories, extent blocks), plus
those filled with 0xff (a full bitmap); units of any other single byte are
the fixtures' file data and free-space fill (images/README.md) and are
left out.
"""
import struct
import sys

UNIT = 1024
MAX_IMAGE = 128 << 20
MAX_RECORD = 0xffff
FIX_CSUMS = 1 << 31


def keep(unit):
    first = unit[0]
    return unit.count(first) != len(unit) or first == 0xff


def pack(data, flags=0):
    size = min(len(data), MAX_IMAGE)
    out = [struct.pack("<I", size | flags)]
    units = (size + UNIT - 1) // UNIT
    i = 0
    while i < units:
        if not keep(data[i * UNIT:(i + 1) * UNIT]):
            i += 1
            continue
        j = i + 1
        while j < units and j - i < MAX_RECORD and \
                keep(data[j * UNIT:(j + 1) * UNIT]):
            j += 1
        out.append(struct.pack("<IH", i, j - i))
        out.append(data[i * UNIT:j * UNIT])
        i = j
    return b"".join(out)


def main():
    args = sys.argv[1:]
    flags = 0
    if args and args[0] == "--fix-csums":
        flags = FIX_CSUMS
        args.pop(0)
    if len(args) != 2:
        sys.exit("usage: pack.py [--fix-csums] IMAGE OUT")
    with open(args[0], "rb") as f:
        data = f.read(MAX_IMAGE)
    with open(args[1], "wb") as f:
        f.write(pack(data, flags))


if __name__ == "__main__":
    main()
