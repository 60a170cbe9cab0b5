// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bitmap_read.c - many bitmap blocks read at once
 *
 * A fresh 15 TiB filesystem keeps 7 680 block bitmaps on disk, one per
 * flex group, 2 GiB apart.  Read one at a time, each costs a round trip
 * to the device; and a buffered read of a block device starts a readahead
 * of read_ahead_kb (2.5 MiB on a loop device), which for thousands of
 * scattered blocks evicts more than it helps.  So a batch of bitmap
 * blocks is submitted at once through io_uring, on a descriptor of its
 * own: the device sees many small requests in flight.  On a block device
 * that descriptor is O_DIRECT, which leaves the page cache alone; a
 * direct read first writes back any dirty cached pages of its range, so
 * it sees exactly what e2fsck wrote last.
 *
 * Where that cannot work (no liburing at build time, io_uring disabled, a
 * device whose logical block is larger than a 1 KiB filesystem block),
 * the blocks go through libext2fs as every other read does, after asking
 * the kernel to read them ahead.  Any block the batch did not return
 * whole is read again that way, so the batch can only be faster, never
 * different.
 */
/* _GNU_SOURCE, for O_DIRECT: the Makefile defines it */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bitmap.h"
#include "kept_buf.h"

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

struct bitmap_read {
	ext2_filsys fs;
	unsigned char *buf;	/* BITMAP_READ_BATCH blocks */
	int fd;			/* for batches, or -1: through libext2fs */
	uint64_t offset_bytes;	/* where the filesystem starts */
#ifdef HAVE_LIBURING
	struct io_uring ring;
	int misaligned;		/* the device refused a read as unaligned */
	int broken;		/* the ring did what it cannot: see below */
#endif
};

/* The buffer, zeroed: io_uring's writes are invisible to valgrind. */
static errcode_t alloc_buf(struct bitmap_read *br)
{
	size_t len = (size_t)BITMAP_READ_BATCH * br->fs->blocksize;
	errcode_t err;

	err = ext2fs_get_memalign(len, br->fs->blocksize, &br->buf);
	if (!err)
		memset(br->buf, 0, len);
	return err;
}

#ifdef HAVE_LIBURING
/*
 * A second descriptor on the very file @fd has open: through /proc, not
 * by name, so that it cannot be some other file by now.  Direct on a
 * block device (see above); an image file is read through the page
 * cache, which an image just built or copied is still in (a direct read
 * there went to the disk: ten times slower on a 15 TiB image).  Without
 * it (br->fd stays -1) the bitmaps are read one by one.
 */
static void open_batch(struct bitmap_read *br, int fd)
{
	char path[32];
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	br->fd = open(path, O_RDONLY | O_CLOEXEC |
		      (S_ISBLK(st.st_mode) ? O_DIRECT : 0));
	if (br->fd < 0)
		return;
	if (io_uring_queue_init(BITMAP_READ_BATCH, &br->ring, 0) < 0) {
		close(br->fd);
		br->fd = -1;
	}
}

/*
 * Submit all @n reads and wait for every one of them: the buffer must not
 * be read, or filled again, while the kernel may still write into it.
 * @ok[i] says whether block i came back whole.  Should the ring take
 * fewer requests than it was given (the rest would stay queued, to land
 * in a later batch's slots) or fail to say when they are done, it is
 * marked broken and nothing of this batch is trusted.
 */
static void read_batch(struct bitmap_read *br, const blk64_t *blk,
			unsigned int n, int *ok)
{
	unsigned int bs = br->fs->blocksize, i, done = 0;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int ret;

	for (i = 0; i < n; i++) {
		sqe = io_uring_get_sqe(&br->ring);	/* n <= ring size */
		io_uring_prep_read(sqe, br->fd, br->buf + (size_t)i * bs, bs,
				   br->offset_bytes + blk[i] * bs);
		sqe->user_data = i;
	}
	ret = io_uring_submit(&br->ring);
	if (ret != (int)n) {
		br->broken = 1;
		return;
	}
	while (done < n) {
		ret = io_uring_wait_cqe(&br->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			br->broken = 1;
			return;
		}
		i = cqe->user_data;
		ok[i] = cqe->res == (int)bs;
		if (cqe->res == -EINVAL)
			br->misaligned = 1;
		io_uring_cqe_seen(&br->ring, cqe);
		done++;
	}
}

/*
 * From now on, libext2fs reads.  A broken ring may still have reads in
 * flight into the buffer: it is left to them (kept_buf.h) and a new one
 * taken.
 */
static void stop_batches(struct bitmap_read *br)
{
	io_uring_queue_exit(&br->ring);
	close(br->fd);
	br->fd = -1;
	if (!br->broken)
		return;
	kept_buf_leave(br->buf);
	br->buf = NULL;
	alloc_buf(br);		/* none: bitmap_read_blocks() says so */
}
#endif

errcode_t bitmap_read_open(ext2_filsys fs, int fd, uint64_t offset_bytes,
			   struct bitmap_read **out)
{
	struct bitmap_read *br;
	errcode_t err;

	err = ext2fs_get_memzero(sizeof(*br), &br);
	if (err)
		return err;
	br->fs = fs;
	br->fd = -1;
	br->offset_bytes = offset_bytes;
	err = alloc_buf(br);
	if (err) {
		ext2fs_free_mem(&br);
		return err;
	}
#ifdef HAVE_LIBURING
	open_batch(br, fd);
#else
	(void)fd;
#endif
	*out = br;
	return 0;
}

/* Ask the kernel to read @n blocks ahead, in runs of contiguous ones. */
static void readahead_blocks(ext2_filsys fs, const blk64_t *blk,
			     unsigned int n)
{
	blk64_t start = 0, len = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (len && blk[i] == start + len) {
			len++;
			continue;
		}
		if (len)
			io_channel_cache_readahead(fs->io, start, len);
		start = blk[i];
		len = 1;
	}
	if (len)
		io_channel_cache_readahead(fs->io, start, len);
}

const unsigned char *bitmap_read_blocks(struct bitmap_read *br,
				       const blk64_t *blk, unsigned int n,
				       errcode_t *err)
{
	int ok[BITMAP_READ_BATCH] = { 0 };
	unsigned int bs = br->fs->blocksize, i;

#ifdef HAVE_LIBURING
	if (br->fd >= 0)
		read_batch(br, blk, n, ok);
	if (br->fd >= 0 && (br->misaligned || br->broken)) {
		memset(ok, 0, sizeof(ok));
		stop_batches(br);
	}
#endif
	if (!br->buf) {
		for (i = 0; i < n; i++)
			err[i] = EXT2_ET_NO_MEMORY;
		return NULL;
	}
	if (br->fd < 0)
		readahead_blocks(br->fs, blk, n);
	for (i = 0; i < n; i++) {
		err[i] = 0;
		if (!ok[i] && io_channel_read_blk64(br->fs->io, blk[i], 1,
						    br->buf + (size_t)i * bs))
			err[i] = EXT2_ET_BLOCK_BITMAP_READ;
	}
	return br->buf;
}

void bitmap_read_close(struct bitmap_read *br)
{
	if (!br)
		return;
#ifdef HAVE_LIBURING
	if (br->fd >= 0)
		stop_batches(br);
#endif
	ext2fs_free_mem(&br->buf);
	ext2fs_free_mem(&br);
}
