/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_zero_int.h - the state --zero-fill's three files share: the
 * writing (target_zero_write.c), the reading (target_zero_read.c) and
 * the driver that decides what to zero how (target_zero.c)
 */
#ifndef E2TRIM_TARGET_ZERO_INT_H
#define E2TRIM_TARGET_ZERO_INT_H

#include <stdint.h>

#include "target_core.h"

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#define ZF_CHUNK	(1u << 20)	/* bytes read at once, at most */
#define ZF_DEPTH	16		/* pieces in flight */
#define ZF_AHEAD	(16u << 20)	/* without io_uring: readahead asked */
#define ZF_WITHDRAWN	ZF_DEPTH	/* user_data of no piece */
/*
 * The free space is zeroed in whole units of this size at file offsets
 * that are multiples of it (cut at the extent's ends): a host or device
 * block, so that a partly zeroed unit does not become a read-modify-write
 * (nor, in a file, a written block of zeros where a hole would do).
 */
#define ZF_UNIT		4096u

/* How the units that hold something are zeroed. */
enum zf_how {
	ZF_HOW_RANGE,			/* a hole punched, or BLKZEROOUT */
	ZF_HOW_WRITE,			/* zeros written (the host cannot) */
};

struct zf_bufs {
	unsigned char *mem;		/* ZF_DEPTH buffers, then the zeros */
	unsigned char *zeros;		/* ZF_CHUNK bytes of zeros */
	int dfd;			/* O_DIRECT on a block device, or -1 */
	int rfd;			/* a loop device's backing file, or -1 */
	uint64_t roff;			/* where the device starts in it
					   (0 without one) */
	int is_blk;			/* t->fd is a block device */
	enum zf_how how;
	int unread;			/* data ranges zeroed without a read */
	struct {
		uint64_t start, len;	/* bytes of the filesystem */
	} slot[ZF_DEPTH];
	unsigned int free[ZF_DEPTH];	/* stack of unused slots */
	unsigned int nfree;
	int ring_init;			/* the ring was set up */
	int ring_ok;			/* pieces go through the ring */
	int broken;			/* a wait failed: stop waiting */
#ifdef HAVE_LIBURING
	struct io_uring ring;
#endif
};

/*
 * Where the filesystem starts in the file whose blocks the host keeps, and
 * which is read: the image file, or a loop device's backing file (for any
 * other device, where it starts on the device).  Pieces and units are cut
 * on multiples of ZF_CHUNK and ZF_UNIT of it.
 */
static inline uint64_t zf_file_base(const struct target *t,
				    const struct zf_bufs *z)
{
	return z->roff + t->base_bytes;
}

/* Record the first failure (an errno value) at @at; returns t->error. */
errcode_t zf_fail(struct target *t, uint64_t at, errcode_t err);

/*
 * [start, start + len) zeroed without writing data (hole, BLKZEROOUT, or
 * with @discard a loop device's discard): 0 with *@done 1, or 0 with
 * *@done 0 when the host cannot, or the errno value of a failure
 * (target_zero_write.c).
 */
errcode_t zf_zero_range(struct target *t, struct zf_bufs *z, uint64_t start,
			uint64_t len, int discard, int *done);

/* Zeros over [start, start + len) of the filesystem, then count them. */
errcode_t zf_zero_run(struct target *t, struct zf_bufs *z, uint64_t start,
		      uint64_t len);

/*
 * Read [start, end) of the filesystem and zero what is not zero; pieces
 * may still be in flight when it returns.  0, E2TRIM_ERR_INTERRUPTED when
 * asked to stop, or the errno value of a failure (t->error).
 */
errcode_t zf_read(struct target *t, struct zf_bufs *z, uint64_t start,
		  uint64_t end);

/* Wait for every piece in flight. */
void zf_read_drain(struct target *t, struct zf_bufs *z);

/* zf_read_drain(), then free the buffers and the ring. */
void zf_read_free(struct target *t, struct zf_bufs *z);

#endif /* E2TRIM_TARGET_ZERO_INT_H */
