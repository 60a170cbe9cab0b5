// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_paths.c - every path to the target's bytes, held or refused
 *
 * e2trim claims the name it was given (O_EXCL on a device node, qemu's
 * locks on a file), but the same bytes can be reached by paths that
 * honour neither: another loop device over the image file (any name, a
 * link since removed, any offset range), the file under a loop device
 * named as the target, a program that has the file or one of those
 * loop devices open for writing, a FUSE mount of the file (fuse2fs).
 * "Alone" is a property of the bytes, not of the name: for every target
 * whose bytes live in a file (an image, a loop device, ?offset=, -p N,
 * losetup -o) find every path to them; refuse (10) what is in use, hold
 * what is not for the whole run.
 *
 *  - loop devices over the bytes: LOOP_GET_STATUS64's device and inode of
 *    the backing file, their offset range meeting the target's
 *    (open_hold.c); in use when mounted, under a dm/md device, claimed
 *    (O_EXCL fails) or open for writing; held O_EXCL otherwise, and
 *    looked for again before the first discard and between batches.
 *  - a loop target's backing file: qemu's image locks on it too, so that
 *    a VM, qemu-io or qemu-nbd opened on the file fails to get its write
 *    lock (26 if one holds it already).  A backing file whose name was
 *    removed cannot be opened, nor by a VM; its holders are still seen.
 *  - processes holding the file or one of those devices open for
 *    writing, and FUSE servers of the file (open_paths_scan.c): refused.
 *
 * All of it runs before the superblock's gates: a filesystem in use is
 * refused as in use, never as "not clean" with an e2fsck command that
 * would repair the live filesystem under its mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/loop.h>

#include "e2trim_int.h"
#include "image_lock.h"
#include "open_hold.h"
#include "open_paths.h"
#include "open_paths_scan.h"
#include "open_witness.h"
#include "sysfs.h"

void open_paths_file(struct e2trim *t, const struct stat *st)
{
	t->file_dev = st->st_dev;
	t->file_ino = st->st_ino;
	t->file_known = 1;
}

/* The loop devices over the bytes, and the target's own device. */
struct paths {
	dev_t rdevs[MAX_LOOP_HOLDS + 1];
	unsigned int nrdevs;
};

/* One loop device over the bytes: refused if in use, else held. */
static errcode_t path_loop(struct e2trim *t, void *ctx, const char *name)
{
	char path[PATH_MAX], use[PATH_MAX + 64];
	struct paths *p = ctx;
	struct stat st;
	errcode_t err;

	snprintf(path, sizeof(path), "/dev/%s", name);
	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return hold_loop(t, NULL, name);
	if (open_paths_device_use(st.st_rdev, name, use, sizeof(use)))
		return lib_fail(t, E2TRIM_ERR_LOOP_BUSY, "its bytes are also "
				"%s, which is %s", path, use);
	err = hold_loop(t, NULL, name);
	if (err == E2TRIM_ERR_LOOP_BUSY)
		return lib_fail(t, err, "its bytes are also %s, which another "
				"program opened exclusively (a mount, mkfs, "
				"e2fsck, fuse2fs)", path);
	if (!err && p->nrdevs < sizeof(p->rdevs) / sizeof(p->rdevs[0]))
		p->rdevs[p->nrdevs++] = st.st_rdev;
	return err;
}

/*
 * A loop target: its backing file's device, inode and the target's range
 * in it; 0 if @t is no loop device.
 */
static int loop_target(struct e2trim *t, struct loop_info64 *li)
{
	struct stat st;

	/* valgrind cannot see that the ioctl fills @li */
	memset(li, 0, sizeof(*li));
	if (!t->is_blkdev || t->fd < 0 || fstat(t->fd, &st) ||
	    ioctl(t->fd, LOOP_GET_STATUS64, li))
		return 0;
	t->file_dev = (dev_t)li->lo_device;
	t->file_ino = li->lo_inode;
	t->file_known = 1;
	t->self_loop = st.st_rdev;
	t->file_start_bytes = li->lo_offset + t->offset_bytes;
	t->file_end_bytes = t->file_start_bytes + t->size_bytes;
	return 1;
}

/*
 * The backing file of a loop target, opened by the name sysfs gives if
 * it is still that file, with qemu's locks taken on it (not in a dry
 * run); refused (26) if a VM or qemu-nbd holds them.
 */
static errcode_t lock_backing(struct e2trim *t)
{
	char name[PATH_MAX], comm[64];
	struct stat st;
	errcode_t err;
	pid_t pid;

	if (sysfs_line(t->self_loop, "loop/backing_file", name, sizeof(name)))
		return 0;
	t->backing_fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY |
			     O_NONBLOCK);
	if (t->backing_fd < 0)
		return 0;	/* "... (deleted)": nobody opens it by name */
	if (fstat(t->backing_fd, &st) || st.st_dev != t->file_dev ||
	    st.st_ino != t->file_ino) {
		open_paths_close(t);
		return 0;
	}
	if (!t->opt.dryrun) {
		err = image_lock_take(t->backing_fd);
		if (err)
			return lib_fail_cause(t, E2TRIM_ERR_OPEN, err, "cannot "
					      "take qemu's image locks on %s",
					      name);
	}
	if (!image_lock_other(t->backing_fd, &pid))
		return 0;
	pid = image_lock_holder(t->backing_fd, pid, comm, sizeof(comm));
	if (pid > 0)
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "its backing file "
				"%s is held by %s, pid %d", name, comm,
				(int)pid);
	return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED, "its backing file %s is "
			"held by a process e2trim cannot see", name);
}

errcode_t open_paths_hold(struct e2trim *t)
{
	struct loop_info64 li;
	struct paths p = { { 0 }, 0 };
	struct hold_bytes m;
	errcode_t err;

	if (t->file_known && !t->is_blkdev) {
		/* a VM image is qemu-nbd's to read whole: all of it */
		t->file_start_bytes = t->nbd ? 0 : t->offset_bytes;
		t->file_end_bytes = t->nbd ? UINT64_MAX :
				    t->offset_bytes + t->size_bytes;
	} else if (loop_target(t, &li)) {
		p.rdevs[p.nrdevs++] = t->self_loop;
		err = lock_backing(t);
		if (err)
			return err;
	} else {
		return 0;
	}
	hold_bytes_of(t, &m);
	err = hold_each_loop(t, &m, path_loop, &p);
	if (!err)
		err = open_paths_scan(t, &m, p.rdevs, p.nrdevs);
	return err;
}

/*
 * Between batches the scan of every process costs what the machine's
 * descriptors cost (a few ms for 1,200 here): at most once a second,
 * and never more than 1/20 of the time.
 */
#define PATHS_EVERY_NS 1000000000LL
#define PATHS_SHARE 20

/* The processes again, over what is held now: the loop devices and the
   target's own. */
errcode_t open_paths_recheck(struct e2trim *t)
{
	dev_t rdevs[MAX_LOOP_HOLDS + 1];
	long long start = lib_mono_ns(), took;
	unsigned int n = 0;
	struct hold_bytes m;
	struct stat st;
	errcode_t err;
	int i;

	if (!t->file_known)
		return 0;
	if (t->self_loop)
		rdevs[n++] = t->self_loop;
	for (i = 0; i < t->nloops; i++)
		if (!fstat(t->loop_fds[i], &st))
			rdevs[n++] = st.st_rdev;
	hold_bytes_of(t, &m);
	err = open_paths_scan(t, &m, rdevs, n);
	took = lib_mono_ns() - start;
	t->paths_next_ns = lib_next_look(start, took, PATHS_EVERY_NS,
					 PATHS_SHARE);
	return err;
}

errcode_t open_paths_recheck_now_and_then(struct e2trim *t)
{
	if (!t->file_known || lib_mono_ns() < t->paths_next_ns)
		return 0;
	return open_paths_recheck(t);
}

errcode_t open_paths_in_use_first(struct e2trim *t, errcode_t err)
{
	errcode_t busy;

	/* one that came and went: its trace (26); one still there: 10 */
	err = witness_explains(t, err);
	if (!err || err == E2TRIM_ERR_INTERRUPTED || !t->file_known)
		return err;
	busy = recheck_loop_devices(t);
	if (!busy)
		busy = open_paths_recheck(t);
	return busy ? busy : err;
}

void open_paths_close(struct e2trim *t)
{
	if (t->backing_fd >= 0)
		close(t->backing_fd);
	t->backing_fd = -1;
}
