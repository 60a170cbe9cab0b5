// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck_loop.c - a partition inside an image as a device e2fsck can fix
 *
 * e2fsck takes "disk.img?offset=N" for checking, but after replaying a
 * journal it opens the filesystem again without the offset (e2fsprogs
 * 1.47's e2fsck_run_ext3_journal() calls ext2fs_open(), not ext2fs_open2()
 * with the io options): "while trying to re-open", exit 12, and the
 * journal still flagged.  A loop device starting at the partition needs
 * no offset, and its size limit is the table entry's, so e2fsck cannot
 * write past the partition whatever it believes of the filesystem.
 *
 * The device is set up with LO_FLAGS_AUTOCLEAR: the kernel detaches it
 * when its last holder closes it, so neither a signal nor SIGKILL of
 * e2trim leaves it behind.  e2trim holds it from LOOP_CONFIGURE until
 * e2fsck has exited, then closes it and waits for the detach to show in
 * sysfs: the trim that follows must not find a loop device over the
 * image (that is "in use", 10).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/loop.h>
#include <sys/ioctl.h>

#include "cli.h"
#include "fsck_target.h"

/* LOOP_CTL_GET_FREE and LOOP_CONFIGURE race with other losetups */
#define LOOP_TRIES 16

static int configure(int loop_fd, int file_fd, const char *path,
		     uint64_t offset, uint64_t size, int read_only)
{
	struct loop_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned int)file_fd;
	cfg.info.lo_offset = offset;
	cfg.info.lo_sizelimit = size;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR |
			    (read_only ? LO_FLAGS_READ_ONLY : 0);
	snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name),
		 "%s", path);
	return ioctl(loop_fd, LOOP_CONFIGURE, &cfg);
}

/* One attempt: a free loop device configured over @file_fd, held. */
static int try_one(struct fsck_target *ft, int ctl_fd, int file_fd,
		   const char *path, uint64_t offset, uint64_t size,
		   int read_only)
{
	char dev[48];
	int n, fd;

	n = ioctl(ctl_fd, LOOP_CTL_GET_FREE);
	if (n < 0)
		return -errno;
	snprintf(dev, sizeof(dev), "/dev/loop%d", n);
	fd = open(dev, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (configure(fd, file_fd, path, offset, size, read_only)) {
		n = errno;
		close(fd);
		return -n;
	}
	ft->loop_fd = fd;
	snprintf(ft->loop, sizeof(ft->loop), "loop%d", n);
	snprintf(ft->name, sizeof(ft->name), "%s", dev);
	return 0;
}

int fsck_loop_make(struct fsck_target *ft, const char *path, uint64_t offset,
		   uint64_t size, int read_only, char *why, size_t len)
{
	int ctl_fd, file_fd, rc = -EBUSY, i;

	if (!size) {
		snprintf(why, len, "the partition's size is unknown");
		return -EINVAL;
	}
	file_fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (file_fd < 0) {
		rc = -errno;
		snprintf(why, len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	ctl_fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl_fd < 0) {
		rc = -errno;
		snprintf(why, len, "/dev/loop-control: %s (a loop device "
			 "bounds the partition for e2fsck)", strerror(-rc));
		close(file_fd);
		return rc;
	}
	/* another losetup may take the free one first: ask again */
	for (i = 0; i < LOOP_TRIES && (rc == -EBUSY || rc == -ENXIO); i++)
		rc = try_one(ft, ctl_fd, file_fd, path, offset, size,
			     read_only);
	close(ctl_fd);
	/* the loop device holds the file now */
	close(file_fd);
	if (rc)
		snprintf(why, len, "cannot set up a loop device over %s: %s",
			 path, strerror(-rc));
	return rc;
}

/* The loop device's backing file is gone from sysfs: detached. */
static int detached(const char *loop)
{
	char p[96];

	snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", loop);
	return access(p, F_OK) != 0;
}

/*
 * Close our hold; the kernel detaches on the last close.  A prober (udev's
 * blkid) may hold it a moment longer: wait for the detach itself, with a
 * guard that only turns a holder that never lets go into an error.
 */
int fsck_loop_release(struct fsck_target *ft)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int i;

	if (ft->loop_fd < 0)
		return 0;
	close(ft->loop_fd);
	ft->loop_fd = -1;
	for (i = 0; i < 6000 && !detached(ft->loop); i++)
		nanosleep(&tick, NULL);
	if (!detached(ft->loop)) {
		warnx_target(NULL, "/dev/%s: still attached after e2fsck "
			     "(held by another program); detach it: `losetup "
			     "-d /dev/%s`", ft->loop, ft->loop);
		return -1;
	}
	ft->loop[0] = '\0';
	return 0;
}
