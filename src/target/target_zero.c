// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_zero.c - --zero-fill: every free block zero after
 *
 * zerofree's job, for storage that cannot discard and for images that are
 * compressed or made sparse afterwards (qemu-img convert -S, gzip,
 * fallocate --dig-holes): every free block ends up zero.  Writing zeros
 * over all of it would allocate every hole of a sparse image and every
 * unmapped block of a thin volume, so:
 *  - holes of an image file (or of a loop device's backing file) are
 *    skipped (SEEK_DATA): they read as zeros;
 *  - the rest of an image file is punched out unread: a hole reads as
 *    zeros, the file only shrinks, and what zerofree leaves for
 *    fallocate --dig-holes or qemu-img convert -S to find is done already
 *    (unwritten extents, FALLOC_FL_ZERO_RANGE's, would not be: both skip
 *    them as holes, yet they stay allocated).  A loop device over a file
 *    is discarded, which its driver passes on as the same hole;
 *  - everything else is read first (target_zero_read.c) and only what is
 *    not zero is zeroed: a block device (a thin volume allocates what
 *    WRITE ZEROES touches, and a discard need not read back as zeros), a
 *    host that cannot punch (zeros are written), and a host block only
 *    partly free, at an extent's edge.
 * A loop device is read through its backing file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "sysfs.h"
#include "target_blkdev.h"
#include "target_zero.h"
#include "target_zero_int.h"

/* A block device gets a direct descriptor of its own; else -1. */
static int open_direct(int fd, int dryrun)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, (dryrun ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_DIRECT);
}

/*
 * Whether data ranges may be zeroed unread: only where the back end skips
 * holes (next_data), in an image file, or through a loop device over one
 * that takes discards (the loop driver punches them into its file).
 */
static int can_zero_unread(const struct target *t, const struct zf_bufs *z,
			   const struct stat *st)
{
	if (t->zero_write || t->zero_read || !t->ops->next_data)
		return 0;
	if (!z->is_blk)
		return 1;
	return z->rfd >= 0 &&
	       sysfs_u64(st->st_rdev, "queue/discard_max_bytes") > 0;
}

static errcode_t zf_get(struct target *t, struct zf_bufs **out)
{
	struct zf_bufs *z = t->zf;
	struct stat st;
	unsigned int i;

	if (!z) {
		z = calloc(1, sizeof(*z));
		if (!z)
			return ENOMEM;
		z->is_blk = !fstat(t->fd, &st) && S_ISBLK(st.st_mode);
		z->dfd = z->is_blk ? open_direct(t->fd, t->dryrun) : -1;
		z->rfd = z->is_blk ? target_loop_backing(t, &z->roff) : -1;
		z->how = t->zero_write ? ZF_HOW_WRITE : ZF_HOW_RANGE;
		z->unread = can_zero_unread(t, z, &st);
		for (i = 0; i < ZF_DEPTH; i++)
			z->free[z->nfree++] = i;
		t->zf = z;
	}
	*out = z;
	return 0;
}

/*
 * [start, start + len), data in the image file (its holes were skipped),
 * punched out without being read, as the whole of it is to be zero.  0
 * with *@done 1 when done, with *@done 0 when it is to be read instead (a
 * host that cannot punch: from then on, unless it refused only this
 * range); or the errno value of a failure.
 */
static errcode_t zero_unread(struct target *t, struct zf_bufs *z,
			     uint64_t start, uint64_t len, int *done)
{
	errcode_t rc;

	*done = 1;
	if (!t->dryrun) {
		rc = zf_zero_range(t, z, start, len, z->is_blk, done);
		if (!rc && !*done && z->how == ZF_HOW_WRITE)
			z->unread = 0;
		if (rc || !*done)
			return rc;
	}
	t->stats.requests++;
	t->stats.zeroed_bytes += len;
	t->stats.bytes += len;
	target_progress(t);
	return 0;
}

/*
 * Of [start, end), the part [*a, *b) that starts and ends on ZF_UNIT of
 * the host file; 0 when there is none.  A unit only partly free is read
 * instead: zeroing its free part would leave it a written block, which a
 * second run would find (and zero) again.
 */
static int unit_span(const struct target *t, const struct zf_bufs *z,
		     uint64_t start, uint64_t end, uint64_t *a, uint64_t *b)
{
	uint64_t off = zf_file_base(t, z);

	*a = (off + start + ZF_UNIT - 1) / ZF_UNIT * ZF_UNIT - off;
	*b = (off + end) / ZF_UNIT * ZF_UNIT - off;
	return *a < *b;
}

errcode_t target_zero_fill_fd(struct target *t, uint64_t start_bytes,
			      uint64_t len_bytes)
{
	uint64_t end = start_bytes + len_bytes, a, b;
	struct zf_bufs *z;
	errcode_t rc = zf_get(t, &z);
	int done;

	if (rc)
		return zf_fail(t, start_bytes, rc);
	if (!z->unread || !unit_span(t, z, start_bytes, end, &a, &b))
		return zf_read(t, z, start_bytes, end);
	rc = zf_read(t, z, start_bytes, a);
	if (rc)
		return rc;
	rc = zero_unread(t, z, a, b - a, &done);
	if (!rc && !done)
		rc = zf_read(t, z, a, b);
	return rc ? rc : zf_read(t, z, b, end);
}

errcode_t target_zero_fill_finish(struct target *t)
{
	struct zf_bufs *z = t->zf;

	if (!z)
		return t->error;
	zf_read_drain(t, z);
	/* what was written is on the device before e2trim says so */
	if (!t->dryrun && t->stats.zeroed_bytes && fdatasync(t->fd))
		zf_fail(t, 0, errno);
	return t->error;
}

void target_zero_fill_free(struct target *t)
{
	struct zf_bufs *z = t->zf;

	if (!z)
		return;
	zf_read_free(t, z);
	if (z->dfd >= 0)
		close(z->dfd);
	free(z);
	t->zf = NULL;
}
