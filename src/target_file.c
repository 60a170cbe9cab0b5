// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_file.c - discards in an image file: punch holes
 *
 * The host filesystem frees space only in whole blocks of its own, so its
 * block size is the granularity.  Ranges that are holes already are found
 * with SEEK_DATA/SEEK_HOLE and left alone: a second run punches nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "target.h"

static int file_request(struct target *t, uint64_t start_bytes,
			uint64_t len_bytes)
{
	int mode = FALLOC_FL_KEEP_SIZE | (t->mode == TRIM_ZEROOUT ?
		   FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE);

	if (fallocate(t->fd, mode, (off_t)(t->base_bytes + start_bytes),
		      (off_t)len_bytes))
		return -errno;
	return 0;
}

static int file_next_data(struct target *t, uint64_t start_bytes,
			  uint64_t end_bytes, uint64_t *data_start,
			  uint64_t *data_end)
{
	off_t base = t->base_bytes, ds, de;

	ds = lseek(t->fd, base + start_bytes, SEEK_DATA);
	if (ds < 0)
		return errno == ENXIO ? 1 : -errno;	/* hole to EOF */
	if ((uint64_t)(ds - base) >= end_bytes)
		return 1;
	de = lseek(t->fd, ds, SEEK_HOLE);
	if (de < 0)
		return -errno;
	*data_start = ds - base;
	*data_end = (uint64_t)(de - base) < end_bytes ? (uint64_t)(de - base) :
						       end_bytes;
	return 0;
}

static const struct target_ops file_ops = {
	.request = file_request,
	.next_data = file_next_data,
};

int target_file_init(struct target *t, int fd, enum trim_mode mode)
{
	struct statfs sfs;

	if (mode == TRIM_SECURE)
		return -EOPNOTSUPP;
	if (fstatfs(fd, &sfs))
		return -errno;
	t->ops = &file_ops;
	t->fd = fd;
	t->mode = mode;
	t->lim.granularity = sfs.f_bsize > 0 ? (uint64_t)sfs.f_bsize : 1;
	/* host blocks start at file offset 0, not at the partition's start */
	t->lim.align_offset = (t->lim.granularity -
			       t->base_bytes % t->lim.granularity) %
			      t->lim.granularity;
	t->lim.max_bytes = 0;
	return 0;
}
