#!/usr/bin/env python3
"""sha256_sparse.py FILE: the SHA-256 of FILE's bytes, as sha256sum prints
it (hex), read the fast way for the tests' images: only the data extents
are read (SEEK_DATA/SEEK_HOLE), a hole is hashed as the zeros it reads as,
and hashlib's SHA-256 (OpenSSL: the CPU's SHA instructions) is about three
times coreutils' on this machine.  Same bytes, same digest as sha256sum:
only the time differs (a 1 GiB image: 3 s -> under 1 s)."""
import hashlib
import os
import sys

CHUNK = 1 << 20
ZEROS = bytes(CHUNK)


def zeros(h, n):
    while n > 0:
        k = min(n, CHUNK)
        h.update(ZEROS if k == CHUNK else ZEROS[:k])
        n -= k


def digest(path):
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        pos = 0
        while pos < size:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:		# ENXIO: only a hole up to the end
                data = size
            zeros(h, data - pos)
            if data >= size:
                break
            hole = os.lseek(fd, data, os.SEEK_HOLE)
            os.lseek(fd, data, os.SEEK_SET)
            left = hole - data
            while left > 0:
                n = os.readv(fd, [view[:min(left, CHUNK)]])
                if n <= 0:
                    raise OSError(f"{path}: short read")
                h.update(view[:n])
                left -= n
            pos = hole
    finally:
        os.close(fd)
    return h.hexdigest()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: sha256_sparse.py FILE")
    print(digest(sys.argv[1]))
