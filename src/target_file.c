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

/*
 * The plan asks in ascending order and punching (or zeroing) only turns
 * data into holes behind the position asked for, so one lookup answers
 * every extent up to the segment's end: on an image that is sparse
 * already, most extents cost no system call at all.
 */
int data_map_next(struct data_map *m, int fd, uint64_t base,
		  uint64_t start_bytes, uint64_t end_bytes,
		  uint64_t *data_start, uint64_t *data_end)
{
	off_t pos = (off_t)(base + start_bytes), lim = (off_t)(base + end_bytes);

	if (!m->valid || pos >= m->de) {
		m->ds = lseek(fd, pos, SEEK_DATA);
		if (m->ds < 0) {
			if (errno != ENXIO)
				return -errno;
			m->ds = m->de = INT64_MAX;	/* hole to EOF */
		} else {
			m->de = lseek(fd, m->ds, SEEK_HOLE);
			if (m->de < 0)
				return -errno;
		}
		m->valid = 1;
	}
	if (m->ds >= lim)
		return 1;
	*data_start = (uint64_t)(m->ds > pos ? m->ds : pos) - base;
	*data_end = (uint64_t)(m->de < lim ? m->de : lim) - base;
	return 0;
}

static int file_next_data(struct target *t, uint64_t start_bytes,
			  uint64_t end_bytes, uint64_t *data_start,
			  uint64_t *data_end)
{
	return data_map_next(t->priv, t->fd, t->base_bytes, start_bytes,
			     end_bytes, data_start, data_end);
}

static void file_close(struct target *t)
{
	free(t->priv);
}

static const struct target_ops file_ops = {
	.request = file_request,
	.next_data = file_next_data,
	.close = file_close,
};

int target_file_init(struct target *t, int fd, enum trim_mode mode)
{
	struct statfs sfs;

	if (mode == TRIM_SECURE)
		return -EOPNOTSUPP;
	if (fstatfs(fd, &sfs))
		return -errno;
	t->priv = calloc(1, sizeof(struct data_map));
	if (!t->priv)
		return -ENOMEM;
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
