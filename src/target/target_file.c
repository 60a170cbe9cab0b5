// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_file.c - discards in an image file: punch holes
 *
 * The host filesystem frees space only in whole blocks of its own, so its
 * block size is the granularity.  Ranges that are holes already are found
 * with SEEK_DATA/SEEK_HOLE and left alone: a second run punches nothing.
 */
/* _GNU_SOURCE, for fallocate(): the Makefile defines it */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "target_data_map.h"
#include "target_file.h"

static errcode_t file_request(struct target *t, uint64_t start_bytes,
			      uint64_t len_bytes)
{
	int mode = FALLOC_FL_KEEP_SIZE | (t->mode == TRIM_ZEROOUT ?
		   FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE);

	if (fallocate(t->fd, mode, (off_t)(t->base_bytes + start_bytes),
		      (off_t)len_bytes))
		return errno;
	return 0;
}

static errcode_t file_next_data(struct target *t, uint64_t start_bytes,
				uint64_t end_bytes, uint64_t *data_start,
				uint64_t *data_end)
{
	return data_map_next(t->priv, t->fd, t->base_bytes, start_bytes,
			     end_bytes, data_start, data_end);
}

static void file_close(struct target *t)
{
	data_map_free(t->priv);
	free(t->priv);
}

static const struct target_ops file_ops = {
	.request = file_request,
	.next_data = file_next_data,
	.close = file_close,
};

errcode_t target_file_init(struct target *t, int fd, enum trim_mode mode)
{
	struct statfs sfs;

	if (mode == TRIM_SECURE)
		return EOPNOTSUPP;
	if (fstatfs(fd, &sfs))
		return errno;
	t->priv = calloc(1, sizeof(struct data_map));
	if (!t->priv)
		return ENOMEM;
	data_map_resident_init(t->priv, fd, &sfs);
	t->ops = &file_ops;
	t->fd = fd;
	t->mode = mode;
	t->lim.granularity = sfs.f_bsize > 0 ? (uint64_t)sfs.f_bsize : 1;
	/* host blocks start at file offset 0, not at the partition's start */
	t->lim.align_offset = (t->lim.granularity -
			       t->base_bytes % t->lim.granularity) %
			      t->lim.granularity;
	t->lim.max_bytes = 0;
	/* zero-fill frees nothing: every free byte is to be zero after */
	if (mode == TRIM_ZERO_FILL) {
		t->lim.granularity = 1;
		t->lim.align_offset = 0;
	}
	return 0;
}
