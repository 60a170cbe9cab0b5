// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition_blkdev.c - --partition given with a block device
 *
 * On a block device the kernel has read the table already, and its
 * partition devices (/dev/sdb2, /dev/loop0p2) are where discards belong:
 * their limits and alignment are the kernel's.  e2trim does not read the
 * table again; it names the device to give instead, or, for a loop
 * device attached without partition scanning, how to get one.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "partition.h"
#include "sysfs.h"

#define LOOP_MAJOR 7

/* The kernel's name of partition @partno of @dev ("loop0p2"), if any. */
static int find_partition_dev(dev_t dev, unsigned int partno, char *out,
			      size_t len)
{
	char path[64], attr[PATH_MAX], num[32];
	struct dirent *de;
	DIR *dir;
	int found = 0;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev),
		 minor(dev));
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(attr, sizeof(attr), "%s/partition", de->d_name);
		if (sysfs_line(dev, attr, num, sizeof(num)) == 0 &&
		    strtoul(num, NULL, 10) == partno) {
			snprintf(out, len, "%s", de->d_name);
			found = 1;
		}
	}
	closedir(dir);
	return found;
}

void partition_devices(int fd, struct e2trim_partition *p, unsigned int n)
{
	char name[NAME_MAX + 1];
	struct stat st;
	unsigned int i;

	if (fstat(fd, &st) || !S_ISBLK(st.st_mode))
		return;
	for (i = 0; i < n; i++) {
		if (!find_partition_dev(st.st_rdev, p[i].partno, name,
					sizeof(name)))
			continue;
		/* a name cut short would be another device: none instead */
		if (snprintf(p[i].device, sizeof(p[i].device), "/dev/%s",
			     name) >= (int)sizeof(p[i].device))
			p[i].device[0] = '\0';
	}
}

static int loop_partscan(dev_t dev)
{
	char val[16];

	return sysfs_line(dev, "loop/partscan", val, sizeof(val)) == 0 &&
	       val[0] == '1';
}

errcode_t partition_on_blkdev(struct e2trim *et, int fd,
			       unsigned int partno)
{
	char part[NAME_MAX + 1], backing[PATH_MAX];
	struct stat st;
	dev_t dev;

	if (fstat(fd, &st))
		return lib_fail_cause(et, E2TRIM_ERR_PARTITION_ON_BLKDEV, errno,
				      NULL);
	dev = st.st_rdev;
	if (sysfs_line(dev, "partition", part, sizeof(part)) == 0)
		return lib_fail(et, E2TRIM_ERR_PARTITION_ON_BLKDEV, "is a "
				"partition already; give it without --partition");
	if (find_partition_dev(dev, partno, part, sizeof(part)))
		return lib_fail(et, E2TRIM_ERR_PARTITION_ON_BLKDEV, "give the "
				"partition's own device, /dev/%s, instead of "
				"--partition", part);
	if (major(dev) == LOOP_MAJOR &&
		 sysfs_line(dev, "loop/backing_file", backing,
			    sizeof(backing)) == 0)
		return lib_fail(et, E2TRIM_ERR_PARTITION_ON_BLKDEV, "a loop "
			"device without a partition %u device (%s): give the "
			"image itself (e2trim -p %u %s)%s", partno,
			loop_partscan(dev) ? "the kernel made none" :
			"attached without partition scanning", partno, backing,
			loop_partscan(dev) ? "" : ", or attach it with "
			"losetup -P and give its partition device");
	return lib_fail(et, E2TRIM_ERR_PARTITION_ON_BLKDEV, "has no partition "
			"%u; --partition is for image files; give the "
			"partition's own device (such as /dev/sdb1)", partno);
}
