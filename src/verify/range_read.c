// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * range_read.c - ranges of blocks read in order, many requests in flight
 *
 * libext2fs's inode scan reads an inode table 8 blocks at a time and
 * waits for each read: on a 2 TiB filesystem with every group
 * initialized, tens of thousands of small synchronous reads, ten times
 * the time the same bytes take in large requests.  Here contiguous
 * ranges are joined, cut into chunks of RANGE_READ_CHUNK_BYTES, and up to
 * RANGE_READ_DEPTH chunks are in flight through io_uring while the
 * caller works on the oldest.
 *
 * As in bitmap_read.c, the requests go through a descriptor of our own
 * on the very file libext2fs has open: O_DIRECT on a block device (the
 * kernel writes back any dirty cached page of the range before a direct
 * read, so it sees exactly what e2fsck wrote last, and the page cache is
 * left alone), buffered on an image file.  Any chunk the ring did not
 * return whole (short read, error, a device that refuses the alignment
 * of a 1 KiB-block filesystem) is read again through libext2fs, so the
 * ring can only be faster, never different.  Without liburing, or when
 * io_uring is unavailable, every chunk is read through libext2fs after
 * asking the kernel to read the window ahead.
 */
/* _GNU_SOURCE, for O_DIRECT: the Makefile defines it */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kept_buf.h"
#include "range_read.h"

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

int (*range_read_fault)(int res, unsigned int len);

enum slot_state {
	SLOT_FLIGHT,		/* the ring is reading it */
	SLOT_READ,		/* its buffer holds the blocks */
	SLOT_TODO,		/* to be read through libext2fs */
};

struct slot {
	blk64_t blk;
	unsigned int nblk;
	enum slot_state state;
	unsigned char *buf;
};

struct rr {
	ext2_filsys fs;
	const struct range_read_ops *ops;
	void *priv;
	unsigned int chunk_blocks;
	blk64_t cur_blk, cur_len;	/* named, not queued yet */
	blk64_t held_blk, held_len;	/* named after cur, not next to it */
	int eof;			/* ops->next() has no more */
	struct slot slot[RANGE_READ_DEPTH];	/* a ring, oldest at head */
	unsigned int head, count;
	unsigned char *pool;		/* every slot's buffer */
	int fd;				/* for the ring, or -1 */
	uint64_t offset_bytes;
#ifdef HAVE_LIBURING
	struct io_uring ring;
	unsigned int flight;		/* slots the ring still reads */
	int broken;			/* see stop_ring() */
	int misaligned;
#endif
};

/*
 * The buffers of all slots, RANGE_READ_POOL_BYTES in one piece, zeroed
 * (io_uring's writes are invisible to valgrind).  Memory touched for the
 * first time is what costs most here: on the test machine's VM each new
 * page is a fault to the host, 0.25-0.6 ms under load, so 8 MiB of 4 KiB
 * pages took 0.5 s.  One aligned piece can be one transparent huge page.
 */
static errcode_t alloc_pool(struct rr *rr)
{
	size_t each = (size_t)rr->chunk_blocks * rr->fs->blocksize;
	errcode_t err;
	int i;

	err = ext2fs_get_memalign(RANGE_READ_POOL_BYTES, RANGE_READ_POOL_BYTES,
				  &rr->pool);
	if (err)
		return err;
	madvise(rr->pool, RANGE_READ_POOL_BYTES, MADV_HUGEPAGE);
	memset(rr->pool, 0, RANGE_READ_POOL_BYTES);
	for (i = 0; i < RANGE_READ_DEPTH; i++) {
		rr->slot[i].buf = rr->pool + i * each;
	}
	return 0;
}

static errcode_t slot_buf(struct rr *rr, struct slot *s)
{
	return s->buf ? 0 : alloc_pool(rr);
}

#ifdef HAVE_LIBURING
/* A second descriptor on the file @fd has open: see bitmap_read.c. */
static void start_ring(struct rr *rr, int fd)
{
	char path[32];
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rr->fd = open(path, O_RDONLY | O_CLOEXEC |
		      (S_ISBLK(st.st_mode) ? O_DIRECT : 0));
	if (rr->fd >= 0 && io_uring_queue_init(RANGE_READ_DEPTH, &rr->ring,
					       0) < 0) {
		close(rr->fd);
		rr->fd = -1;
	}
}

/*
 * Wait for one completion.  A ring that cannot say when its reads are
 * done is marked broken.
 */
static void reap_one(struct rr *rr)
{
	struct io_uring_cqe *cqe;
	struct slot *s;
	int ret, res;

	do
		ret = io_uring_wait_cqe(&rr->ring, &cqe);
	while (ret == -EINTR);
	if (ret < 0 || cqe->user_data >= RANGE_READ_DEPTH ||
	    rr->slot[cqe->user_data].state != SLOT_FLIGHT) {
		rr->broken = 1;
		return;
	}
	s = &rr->slot[cqe->user_data];
	res = cqe->res;
	if (range_read_fault)
		res = range_read_fault(res, s->nblk * rr->fs->blocksize);
	s->state = res == (int)(s->nblk * rr->fs->blocksize) ? SLOT_READ :
							       SLOT_TODO;
	if (res == -EINVAL)
		rr->misaligned = 1;
	rr->flight--;
	io_uring_cqe_seen(&rr->ring, cqe);
}

/*
 * From now on, libext2fs reads.  Every read in flight is waited for
 * first.  A broken ring may still have reads in flight into the buffers:
 * those are left to them (kept_buf.h), and new ones taken.
 */

static void stop_ring(struct rr *rr)
{
	int i;

	while (rr->flight && !rr->broken)
		reap_one(rr);
	io_uring_queue_exit(&rr->ring);
	close(rr->fd);
	rr->fd = -1;
	if (!rr->broken)
		return;
	for (i = 0; i < RANGE_READ_DEPTH; i++) {
		rr->slot[i].state = SLOT_TODO;	/* nothing of it trusted */
		rr->slot[i].buf = NULL;
	}
	if (rr->pool)
		kept_buf_leave(rr->pool);
	rr->pool = NULL;
}

static void submit(struct rr *rr, unsigned int i)
{
	struct slot *s = &rr->slot[i];
	unsigned int bs = rr->fs->blocksize;
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&rr->ring);	/* flight < ring size */
	io_uring_prep_read(sqe, rr->fd, s->buf, s->nblk * bs,
			   rr->offset_bytes + s->blk * bs);
	sqe->user_data = i;
	s->state = SLOT_FLIGHT;
	rr->flight++;
}

/* Submit the @n reads just queued; should the ring take fewer, none counts. */
static void submit_all(struct rr *rr, unsigned int n)
{
	if (n && io_uring_submit(&rr->ring) != (int)n)
		rr->broken = 1;
}
#endif

/* The next chunk of the ranges, contiguous ones joined.  1: none left. */
static int next_chunk(struct rr *rr, blk64_t *blk, unsigned int *nblk)
{
	blk64_t b, l;

	if (!rr->cur_len && rr->held_len) {
		rr->cur_blk = rr->held_blk;
		rr->cur_len = rr->held_len;
		rr->held_len = 0;
	}
	while (!rr->eof && !rr->held_len && rr->cur_len < rr->chunk_blocks) {
		if (rr->ops->next(rr->priv, &b, &l)) {
			rr->eof = 1;
		} else if (!l) {
			continue;
		} else if (!rr->cur_len) {
			rr->cur_blk = b;
			rr->cur_len = l;
		} else if (b == rr->cur_blk + rr->cur_len) {
			rr->cur_len += l;
		} else {
			rr->held_blk = b;
			rr->held_len = l;
		}
	}
	if (!rr->cur_len)
		return 1;
	*nblk = rr->cur_len < rr->chunk_blocks ? rr->cur_len : rr->chunk_blocks;
	*blk = rr->cur_blk;
	rr->cur_blk += *nblk;
	rr->cur_len -= *nblk;
	return 0;
}

/* Queue chunks until the window is full or the ranges are done. */
static errcode_t fill(struct rr *rr)
{
	unsigned int i, queued = 0;
	errcode_t err = 0;
	struct slot *s;

	while (rr->count < RANGE_READ_DEPTH) {
		i = (rr->head + rr->count) % RANGE_READ_DEPTH;
		s = &rr->slot[i];
		if (next_chunk(rr, &s->blk, &s->nblk))
			break;
		rr->count++;
		s->state = SLOT_TODO;
		err = slot_buf(rr, s);
		if (err)
			break;
#ifdef HAVE_LIBURING
		if (rr->fd >= 0 && !rr->broken && !rr->misaligned) {
			submit(rr, i);
			queued++;
			continue;
		}
#endif
		io_channel_cache_readahead(rr->fs->io, s->blk, s->nblk);
	}
#ifdef HAVE_LIBURING
	submit_all(rr, queued);
#else
	(void)queued;
#endif
	return err;
}

/* The oldest chunk, read: by the ring, else through libext2fs. */
static errcode_t take_head(struct rr *rr, struct slot **out)
{
	struct slot *s = &rr->slot[rr->head];
	errcode_t err;

#ifdef HAVE_LIBURING
	while (rr->fd >= 0 && s->state == SLOT_FLIGHT && !rr->broken)
		reap_one(rr);
	if (rr->fd >= 0 && (rr->broken || rr->misaligned))
		stop_ring(rr);
#endif
	if (s->state != SLOT_READ) {
		err = slot_buf(rr, s);
		if (err)
			return err;
		err = io_channel_read_blk64(rr->fs->io, s->blk, s->nblk, s->buf);
		if (err)
			return err;
	}
	*out = s;
	return 0;
}

errcode_t range_read(ext2_filsys fs, int fd, uint64_t offset_bytes,
		     const struct range_read_ops *ops, void *priv)
{
	struct rr rr;
	struct slot *s;
	errcode_t err;

	memset(&rr, 0, sizeof(rr));
	rr.fs = fs;
	rr.ops = ops;
	rr.priv = priv;
	rr.fd = -1;
	rr.offset_bytes = offset_bytes;
	rr.chunk_blocks = RANGE_READ_CHUNK_BYTES / fs->blocksize;
#ifdef HAVE_LIBURING
	start_ring(&rr, fd);
#else
	(void)fd;
#endif
	for (;;) {
		err = fill(&rr);
		if (err || !rr.count)
			break;
		err = take_head(&rr, &s);
		if (!err)
			err = ops->data(priv, s->blk, s->nblk, s->buf);
		if (err)
			break;
		rr.head = (rr.head + 1) % RANGE_READ_DEPTH;
		rr.count--;
	}
#ifdef HAVE_LIBURING
	if (rr.fd >= 0)
		stop_ring(&rr);
#endif
	ext2fs_free_mem(&rr.pool);
	return err;
}
