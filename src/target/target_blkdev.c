// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_blkdev.c - discards on a block device: one ioctl per request
 *
 * The limits come from sysfs.  A partition has no queue of its own: its
 * granularity and maximum are its disk's, and its discard_alignment says
 * how far its first sector is from the disk's allocation-unit boundary.
 *
 * --zero-fill on a loop device looks at the backing file's holes: they
 * read zero through the device, so they need not be read at all; and it
 * reads the rest from the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/major.h>

#include "sysfs.h"
#include "target_blkdev.h"
#include "target_data_map.h"
#include "target_uring.h"

static int is_partition(dev_t dev)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition",
		 major(dev), minor(dev));
	return access(path, F_OK) == 0;
}

static errcode_t blkdev_request(struct target *t, uint64_t start_bytes,
				uint64_t len_bytes)
{
	static const unsigned long req[] = {
		[TRIM_DISCARD] = BLKDISCARD,
		[TRIM_SECURE] = BLKSECDISCARD,
		[TRIM_ZEROOUT] = BLKZEROOUT,
	};
	uint64_t range[2] = { t->base_bytes + start_bytes, len_bytes };

	if (ioctl(t->fd, req[t->mode], range))
		return errno;
	return 0;
}

static const struct target_ops blkdev_ops = {
	.request = blkdev_request,
};

/* A loop device's backing file, open for SEEK_DATA. */
struct loop_state {
	struct data_map map;
	int bfd;
	uint64_t offset;	/* where the device starts in the file */
};

static errcode_t loop_next_data(struct target *t, uint64_t start_bytes,
				uint64_t end_bytes, uint64_t *data_start,
				uint64_t *data_end)
{
	struct loop_state *ls = t->priv;

	return data_map_next(&ls->map, ls->bfd, ls->offset + t->base_bytes,
			     start_bytes, end_bytes, data_start, data_end);
}

static void loop_close(struct target *t)
{
	struct loop_state *ls = t->priv;

	if (ls)
		close(ls->bfd);
	free(ls);
}

static const struct target_ops loop_ops = {
	.request = blkdev_request,
	.next_data = loop_next_data,
	.close = loop_close,
};

int target_loop_backing(const struct target *t, uint64_t *offset)
{
	const struct loop_state *ls = t->priv;

	if (t->ops != &loop_ops)
		return -1;	/* conventions: an fd, or -1 for none */
	*offset = ls->offset;
	return ls->bfd;
}

/*
 * The backing file of loop device @fd, read-only, or -1 (conventions: an
 * fd, or -1 when there is none to use, as open() says).  The name in
 * sysfs may be stale (renamed, deleted, replaced): the file opened must
 * be the device's own inode.  Nothing of the device may be only in its
 * page cache, where the file's holes would not show it: fsync first
 * (a flush reaches the loop driver, which fsyncs the file).
 */
static int loop_backing(int fd, const struct stat *st, uint64_t *offset)
{
	struct loop_info64 li;
	struct stat bst;
	char path[PATH_MAX];
	int bfd;

	if (major(st->st_rdev) != LOOP_MAJOR || is_partition(st->st_rdev))
		return -1;
	memset(&li, 0, sizeof(li));
	if (ioctl(fd, LOOP_GET_STATUS64, &li) || li.lo_encrypt_type)
		return -1;
	if (sysfs_line(st->st_rdev, "loop/backing_file", path, sizeof(path)))
		return -1;
	bfd = open(path, O_RDONLY | O_CLOEXEC);
	if (bfd < 0)
		return -1;
	if (fstat(bfd, &bst) || !S_ISREG(bst.st_mode) ||
	    bst.st_ino != li.lo_inode || bst.st_dev != li.lo_device ||
	    fsync(fd)) {
		close(bfd);
		return -1;
	}
	*offset = li.lo_offset;
	return bfd;
}

/*
 * --zero-fill on a loop device: skip the backing file's holes, and read
 * the file rather than the device (the same bytes, without the loop
 * driver's one request at a time in between).
 */
static void loop_init(struct target *t, const struct stat *st)
{
	struct loop_state *ls;
	uint64_t offset;
	int bfd = loop_backing(t->fd, st, &offset);

	if (bfd < 0)
		return;
	ls = calloc(1, sizeof(*ls));
	if (!ls) {
		close(bfd);
		return;
	}
	ls->bfd = bfd;
	ls->offset = offset;
	t->priv = ls;
	t->ops = &loop_ops;
}

/* A queue attribute: a partition reads its disk's queue. */
static uint64_t queue_u64(dev_t dev, int partition, const char *name)
{
	char attr[64];

	snprintf(attr, sizeof(attr), "%squeue/%s", partition ? "../" : "",
		 name);
	return sysfs_u64(dev, attr);
}

/*
 * The first boundary counted from the filesystem, which starts base_bytes
 * into the device (a "/dev/loop0?offset=1000"): boundaries lie at
 * @dev_align + k * granularity from the device's start.
 */
static void align_to_fs(struct target *t, uint64_t dev_align)
{
	uint64_t g = t->lim.granularity;

	t->lim.align_offset = (dev_align % g + g - t->base_bytes % g) % g;
}

errcode_t target_blkdev_init(struct target *t, int fd, enum trim_mode mode)
{
	struct stat st;
	uint64_t lbs;
	int part;

	if (fstat(fd, &st))
		return errno;
	part = is_partition(st.st_rdev);
	t->ops = &blkdev_ops;
	t->fd = fd;
	t->mode = mode;

	lbs = queue_u64(st.st_rdev, part, "logical_block_size");
	if (mode == TRIM_ZEROOUT || mode == TRIM_ZERO_FILL) {
		/* zeroing needs only logical-block alignment, any size */
		t->lim.granularity = lbs ? lbs : 512;
		align_to_fs(t, 0);
		t->lim.max_bytes = 0;
		if (mode == TRIM_ZERO_FILL)
			loop_init(t, &st);
		return 0;
	}
	t->lim.granularity = queue_u64(st.st_rdev, part, "discard_granularity");
	t->lim.max_bytes = queue_u64(st.st_rdev, part, "discard_max_bytes");
	if (t->lim.granularity == 0 || t->lim.max_bytes == 0)
		return EOPNOTSUPP;
	if (t->lim.granularity < lbs)
		t->lim.granularity = lbs;
	/* bytes from this device's (or partition's) start to a boundary */
	align_to_fs(t, sysfs_u64(st.st_rdev, "discard_alignment"));
	/* many discards in flight where the kernel can; else one by one */
	if (!t->dryrun)
		target_uring_init(t, &blkdev_ops);
	return 0;
}
