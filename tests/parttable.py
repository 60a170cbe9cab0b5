#!/usr/bin/env python3
"""parttable.py - edit a partition table the way sfdisk will not

  parttable.py mbr-set IMG N START SIZE     MBR primary entry N (1-4):
                                            start and size in sectors
  parttable.py ebr-set IMG LBA N START SIZE entry N (1-4) of the EBR at LBA:
                                            start (relative, as the EBR
                                            says) and size in sectors
  parttable.py gpt-set IMG N FIRST LAST     GPT entry N: first and last LBA,
                                            in both copies, CRCs made right
  parttable.py gpt-break-primary IMG        spoil the primary GPT header's
                                            CRC (the backup stays intact)
  parttable.py gpt-break-both IMG           spoil both headers' CRCs
  parttable.py gpt-break-primary-entries IMG
                                            change a byte of the primary's
                                            entry array (the last, unused
                                            entry), not its header

sfdisk refuses overlapping entries; a lying table is exactly what the
tests need.  512-byte sectors, as sfdisk makes on an image file.
"""
import struct
import sys
import zlib

SS = 512


def mbr_set(img, n, start, size):
    with open(img, "r+b") as f:
        f.seek(446 + 16 * (n - 1) + 8)
        f.write(struct.pack("<II", start, size))


def ebr_set(img, lba, n, start, size):
    with open(img, "r+b") as f:
        f.seek(lba * SS + 510)
        assert f.read(2) == b"\x55\xaa", "no EBR at LBA %d" % lba
        f.seek(lba * SS + 446 + 16 * (n - 1) + 8)
        f.write(struct.pack("<II", start, size))


def gpt_header_lbas(f):
    """The LBAs of both headers, from the primary's alternate_lba."""
    f.seek(SS)
    hdr = f.read(92)
    assert hdr[:8] == b"EFI PART", "no primary GPT header"
    return 1, struct.unpack_from("<Q", hdr, 32)[0]


def gpt_fix(f, lba):
    """Recompute the entry array CRC and the header CRC of one copy."""
    f.seek(lba * SS)
    hdr = bytearray(f.read(SS))
    hsize = struct.unpack_from("<I", hdr, 12)[0]
    elba, nent, esz = struct.unpack_from("<QII", hdr, 72)
    f.seek(elba * SS)
    ecrc = zlib.crc32(f.read(nent * esz)) & 0xFFFFFFFF
    struct.pack_into("<I", hdr, 88, ecrc)
    struct.pack_into("<I", hdr, 16, 0)
    struct.pack_into("<I", hdr, 16, zlib.crc32(bytes(hdr[:hsize])) & 0xFFFFFFFF)
    f.seek(lba * SS)
    f.write(hdr)


def gpt_set(img, n, first, last):
    with open(img, "r+b") as f:
        for lba in gpt_header_lbas(f):
            f.seek(lba * SS)
            hdr = f.read(92)
            elba, _, esz = struct.unpack_from("<QII", hdr, 72)
            f.seek(elba * SS + (n - 1) * esz + 32)
            f.write(struct.pack("<QQ", first, last))
            gpt_fix(f, lba)


def gpt_break(img, which):
    """Store the bitwise complement of the right CRC: twice is still bad."""
    with open(img, "r+b") as f:
        lbas = gpt_header_lbas(f)
        for lba in lbas[:which]:
            f.seek(lba * SS)
            hdr = bytearray(f.read(92))
            hsize = struct.unpack_from("<I", hdr, 12)[0]
            struct.pack_into("<I", hdr, 16, 0)
            crc = zlib.crc32(bytes(hdr[:hsize])) & 0xFFFFFFFF
            f.seek(lba * SS + 16)
            f.write(struct.pack("<I", crc ^ 0xFFFFFFFF))


def main(argv):
    cmd, img, args = argv[1], argv[2], [int(a) for a in argv[3:]]
    if cmd == "mbr-set":
        mbr_set(img, *args)
    elif cmd == "ebr-set":
        ebr_set(img, *args)
    elif cmd == "gpt-set":
        gpt_set(img, *args)
    elif cmd == "gpt-break-primary":
        gpt_break(img, 1)
    elif cmd == "gpt-break-both":
        gpt_break(img, 2)
    elif cmd == "gpt-break-primary-entries":
        with open(img, "r+b") as f:
            f.seek(SS)
            elba, nent, esz = struct.unpack_from("<QII", f.read(92), 72)
            f.seek(elba * SS + nent * esz - 1)
            b = f.read(1)[0]
            f.seek(elba * SS + nent * esz - 1)
            f.write(bytes([b ^ 0xFF]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
