// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_blkdev.c - discards on a block device: one ioctl per request
 *
 * The limits come from sysfs.  A partition has no queue of its own: its
 * granularity and maximum are its disk's, and its discard_alignment says
 * how far its first sector is from the disk's allocation-unit boundary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>

#include "target.h"

/* Read one number from /sys/dev/block/MAJ:MIN/<attr>; 0 if absent. */
static uint64_t sysfs_u64(dev_t dev, const char *attr)
{
	char path[128];
	unsigned long long val = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(dev),
		 minor(dev), attr);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &val) != 1)
		val = 0;
	fclose(f);
	return val;
}

static int is_partition(dev_t dev)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition",
		 major(dev), minor(dev));
	return access(path, F_OK) == 0;
}

static int blkdev_request(struct target *t, uint64_t start_bytes,
			  uint64_t len_bytes)
{
	static const unsigned long req[] = {
		[TRIM_DISCARD] = BLKDISCARD,
		[TRIM_SECURE] = BLKSECDISCARD,
		[TRIM_ZEROOUT] = BLKZEROOUT,
	};
	uint64_t range[2] = { t->base_bytes + start_bytes, len_bytes };

	if (ioctl(t->fd, req[t->mode], range))
		return -errno;
	return 0;
}

static const struct target_ops blkdev_ops = {
	.request = blkdev_request,
};

/* A queue attribute: a partition reads its disk's queue. */
static uint64_t queue_u64(dev_t dev, int partition, const char *name)
{
	char attr[64];

	snprintf(attr, sizeof(attr), "%squeue/%s", partition ? "../" : "",
		 name);
	return sysfs_u64(dev, attr);
}

int target_blkdev_init(struct target *t, int fd, enum trim_mode mode)
{
	struct stat st;
	uint64_t lbs;
	int part;

	if (fstat(fd, &st))
		return -errno;
	part = is_partition(st.st_rdev);
	t->ops = &blkdev_ops;
	t->fd = fd;
	t->mode = mode;

	lbs = queue_u64(st.st_rdev, part, "logical_block_size");
	if (mode == TRIM_ZEROOUT || mode == TRIM_ZERO_FILL) {
		/* zeroing needs only logical-block alignment, any size */
		t->lim.granularity = lbs ? lbs : 512;
		t->lim.align_offset = 0;
		t->lim.max_bytes = 0;
		return 0;
	}
	t->lim.granularity = queue_u64(st.st_rdev, part, "discard_granularity");
	t->lim.max_bytes = queue_u64(st.st_rdev, part, "discard_max_bytes");
	if (t->lim.granularity == 0 || t->lim.max_bytes == 0)
		return -EOPNOTSUPP;
	if (t->lim.granularity < lbs)
		t->lim.granularity = lbs;
	/* bytes from this device's (or partition's) start to a boundary */
	t->lim.align_offset = sysfs_u64(st.st_rdev, "discard_alignment");
	/* many discards in flight where the kernel can; else one by one */
	if (!t->dryrun)
		target_uring_init(t, &blkdev_ops);
	return 0;
}
