/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * range_read.h - read ranges of filesystem blocks in order, many at once
 *
 * For whoever reads much metadata in one pass (inode tables, inode
 * bitmaps): the caller names the ranges one after the other, contiguous
 * ones are joined, and each is read in requests of up to
 * RANGE_READ_CHUNK_BYTES, RANGE_READ_DEPTH of them in flight; the data
 * comes back in the order the ranges were named.  Memory is bounded:
 * RANGE_READ_DEPTH chunks, whatever the ranges.  See range_read.c.
 */
#ifndef E2TRIM_RANGE_READ_H
#define E2TRIM_RANGE_READ_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

/*
 * 1 MiB requests, 4 in flight: a flex group's 16 inode bitmaps and 16
 * tables of the 2 TiB bench filesystem (576 KiB) are one request, where
 * 256 KiB ones cut them in three; the floor reads each range whole.  The
 * pool stays small (4 MiB: first touches of new memory cost, see
 * range_read.c).
 */
#define RANGE_READ_CHUNK_BYTES (1U << 20)
#define RANGE_READ_DEPTH 4
#define RANGE_READ_POOL_BYTES (RANGE_READ_CHUNK_BYTES * RANGE_READ_DEPTH)

struct range_read_ops {
	/*
	 * The next range to read: *@blk, *@len (blocks, len > 0).  Returns
	 * 0, or 1 when there is none left.  Called ahead of data().
	 */
	int (*next)(void *priv, blk64_t *blk, blk64_t *len);
	/*
	 * Blocks [blk, blk + len) of the ranges, in order, as read; @buf is
	 * valid until it returns.  A nonzero return stops the read.
	 */
	errcode_t (*data)(void *priv, blk64_t blk, blk64_t len,
			  const unsigned char *buf);
};

/*
 * Read every range of @ops through @fd (the device or image libext2fs
 * reads, the filesystem starting @offset_bytes into it; -1: through
 * libext2fs only).  Returns 0, what data() returned, or the error of a
 * read that libext2fs could not make either.
 */
errcode_t range_read(ext2_filsys fs, int fd, uint64_t offset_bytes,
		     const struct range_read_ops *ops, void *priv);

/*
 * Tests only: when set, every completed batched read's result passes
 * through it (return another: a short read, -EIO) before it is judged.
 */
extern int (*range_read_fault)(int res, unsigned int len);

#endif /* E2TRIM_RANGE_READ_H */
