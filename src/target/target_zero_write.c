// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_zero_write.c - --zero-fill's writing half: a range made zero
 *
 * The cheapest way the host has (a hole punched, BLKZEROOUT, a loop
 * device's discard), else zeros written.  Below the reader
 * (target_zero_read.c), which zeroes what it found not zero, and the
 * driver (target_zero.c), which zeroes an image's data unread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "target_zero_int.h"

errcode_t zf_fail(struct target *t, uint64_t at, errcode_t err)
{
	if (!t->error) {
		t->error = err ? err : EIO;
		t->error_start = at;
	}
	return t->error;
}

/* Zeros written over [start, start + len) of the filesystem. */
static errcode_t write_zeros(struct target *t, struct zf_bufs *z,
			     uint64_t start, uint64_t len)
{
	off_t off = (off_t)(t->base_bytes + start);
	size_t n;
	ssize_t w;

	while (len) {
		n = len < ZF_CHUNK ? len : ZF_CHUNK;
		w = pwrite(z->dfd >= 0 ? z->dfd : t->fd, z->zeros, n, off);
		if (w < 0 && errno == EINVAL && z->dfd >= 0) {
			/* the device refuses the alignment */
			close(z->dfd);
			z->dfd = -1;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return zf_fail(t, start, w < 0 ? errno : EIO);
		len -= w;
		off += w;
		start += w;
	}
	return 0;
}

/*
 * [start, start + len) of the filesystem zeroed the host's cheapest way,
 * without writing data: an image file gets a hole punched (reads return
 * zeros, the file shrinks); a device gets BLKZEROOUT, which the kernel
 * sends as WRITE ZEROES with NOUNMAP (a loop device passes it on as
 * FALLOC_FL_ZERO_RANGE on its backing file) or, where the device has no
 * such command, as written zero pages; it drops the page cache of the
 * range, and the reads here are direct.  With @discard, a loop device
 * over a file is discarded instead, which punches the same hole there.
 * *@done 0 when the host cannot (zeros are then written, or the range
 * read first).
 */
errcode_t zf_zero_range(struct target *t, struct zf_bufs *z, uint64_t start,
			uint64_t len, int discard, int *done)
{
	uint64_t range[2] = { t->base_bytes + start, len };
	int rc;

	*done = 0;
	do {
		if (z->is_blk)
			rc = ioctl(t->fd, discard ? BLKDISCARD : BLKZEROOUT,
				   range);
		else
			rc = fallocate(t->fd, FALLOC_FL_PUNCH_HOLE |
				       FALLOC_FL_KEEP_SIZE, (off_t)range[0],
				       (off_t)len);
	} while (rc && errno == EINTR);
	*done = rc == 0;
	if (rc == 0)
		return 0;
	switch (errno) {
	case EOPNOTSUPP:	/* ramfs, NFSv3, ...: never for this target */
	case ENOTTY:
	case ENOSYS:
		if (discard)
			z->unread = 0;
		else
			z->how = ZF_HOW_WRITE;
		return 0;
	case EINVAL:		/* an edge not on 512 bytes, say: this once */
		return 0;
	}
	return zf_fail(t, start, errno);
}

/* Zeros over [start, start + len) of the filesystem, then count it. */
errcode_t zf_zero_run(struct target *t, struct zf_bufs *z, uint64_t start,
		      uint64_t len)
{
	errcode_t rc = 0;
	int done = 0;

	if (!t->dryrun) {
		if (z->how == ZF_HOW_RANGE)
			rc = zf_zero_range(t, z, start, len, 0, &done);
		if (!rc && !done)
			rc = write_zeros(t, z, start, len);
		if (rc)
			return rc;
	}
	t->stats.requests++;
	t->stats.zeroed_bytes += len;
	return 0;
}
