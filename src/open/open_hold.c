// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_hold.c - what e2trim holds on an image file for the whole run,
 *               and the look again before it discards
 *
 * An image file can be put to use behind e2trim's back in three ways: a
 * loop device (losetup, mount -o loop), a VM or NBD server that opens it
 * (qemu's image locks), and a plain program writing to it.  The first is
 * held from open (every loop device over the file's bytes claimed O_EXCL
 * by open_paths.c, found here by inode) and looked for again before the
 * first discard and between batches: a loop device attached later cannot
 * be stopped, only seen.  The second is refused at open and then kept out
 * by e2trim's own qemu locks (image_lock.c).  The third is seen only while
 * it holds the file open (open_paths_scan.c), never stopped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/loop.h>

#include "e2trim_int.h"
#include "image_lock.h"
#include "open_hold.h"
#include "sysfs.h"

/*
 * The loop device @name is over @m's bytes: its backing file's device and
 * inode as LOOP_GET_STATUS64 gives them (sysfs' backing_file is only a
 * name: "... (deleted)" once that link is removed, another name for the
 * same file may remain), its offset range meeting [start, end).  Without
 * a /dev node (a container) the sysfs name is all there is.
 */
static int loop_matches(const char *name, const struct hold_bytes *m)
{
	char path[PATH_MAX], num[32];
	struct loop_info64 li;
	unsigned int maj, min;
	struct stat st;
	int fd, ok;

	snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
	if (sysfs_read_line(path, num, sizeof(num)) ||
	    sscanf(num, "%u:%u", &maj, &min) != 2 ||
	    (m->self && makedev(maj, min) == m->self))
		return 0;
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	if (sysfs_read_line(path, num, sizeof(num)) == ENOENT)
		return 0;	/* not attached */
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) || st.st_rdev != makedev(maj, min)) {
		if (fd >= 0)
			close(fd);
		snprintf(path, sizeof(path),
			 "/sys/block/%s/loop/backing_file", name);
		return !sysfs_read_line(path, path, sizeof(path)) &&
		       !stat(path, &st) && st.st_dev == m->dev &&
		       st.st_ino == m->ino;
	}
	/* valgrind cannot see that the ioctl fills @li */
	memset(&li, 0, sizeof(li));
	ok = !ioctl(fd, LOOP_GET_STATUS64, &li);
	close(fd);
	return ok && (dev_t)li.lo_device == m->dev && li.lo_inode == m->ino &&
	       li.lo_offset < m->end_bytes &&
	       (!li.lo_sizelimit ||
		li.lo_offset + li.lo_sizelimit > m->start_bytes);
}

errcode_t hold_each_loop(struct e2trim *t, const struct hold_bytes *m,
			 hold_loop_fn fn, void *ctx)
{
	struct dirent *de;
	DIR *dir;
	errcode_t ret = 0;

	dir = opendir("/sys/block");
	if (!dir)
		return 0;
	while (!ret && (de = readdir(dir)))
		if (!strncmp(de->d_name, "loop", 4) &&
		    loop_matches(de->d_name, m))
			ret = fn(t, ctx, de->d_name);
	closedir(dir);
	return ret;
}

/* The whole of file @st, as no target. */
static void whole_file(struct hold_bytes *m, const struct stat *st)
{
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->start_bytes = 0;
	m->end_bytes = UINT64_MAX;
	m->self = 0;
}

void hold_bytes_of(const struct e2trim *t, struct hold_bytes *m)
{
	m->dev = t->file_dev;
	m->ino = t->file_ino;
	m->start_bytes = t->file_start_bytes;
	m->end_bytes = t->file_end_bytes;
	m->self = t->self_loop;
}

struct loop_name {
	char *buf;
	size_t len;
};

static errcode_t note_loop(struct e2trim *t, void *ctx, const char *name)
{
	struct loop_name *n = ctx;

	(void)t;
	snprintf(n->buf, n->len, "/dev/%s", name);
	return E2TRIM_ERR_LOOP_BUSY;	/* stops the walk at the first */
}

int loop_over_file(const struct stat *st, char *name, size_t len)
{
	struct loop_name n = { name, len };
	struct hold_bytes m;

	whole_file(&m, st);
	return hold_each_loop(NULL, &m, note_loop, &n) != 0;
}

/*
 * @dev (a loop device over the image) is swap space: named in /proc/swaps
 * (read here, not through ext2fs_check_mount_point(), which open.c calls
 * only under its lock)
 */
static int loop_is_swap(const char *dev)
{
	char line[PATH_MAX + 128], name[PATH_MAX];
	FILE *f = fopen("/proc/swaps", "re");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%4095s", name) == 1 && !strcmp(name, dev);
	if (f)
		fclose(f);
	return found;
}

errcode_t open_swap_refusal(struct e2trim *t, const char *dev)
{
	char name[DETAIL_LEN / 2];

	lib_fail(t, E2TRIM_ERR_SWAP, "%s is in use as swap space", dev);
	lib_fix(t, E2TRIM_ERR_SWAP, "it holds swap, not a filesystem; "
		"`swapoff %s` if the system can do without it",
		lib_shell_quote(dev, name, sizeof(name)));
	return E2TRIM_ERR_SWAP;
}

/*
 * An image attached to a loop device can be mounted through it at any
 * moment.  Claim every such loop device with O_EXCL for the whole run: if
 * one is already claimed (mounted, or held by another tool), refuse.
 */
errcode_t hold_loop(struct e2trim *t, void *ctx, const char *name)
{
	char path[PATH_MAX];

	(void)ctx;
	snprintf(path, sizeof(path), "/dev/%s", name);
	if (t->nloops == MAX_LOOP_HOLDS)
		return lib_fail(t, E2TRIM_ERR_TOO_MANY_LOOPS,
				"attached to too many loop devices");
	t->loop_fds[t->nloops] = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (t->loop_fds[t->nloops] < 0 && loop_is_swap(path))
		return open_swap_refusal(t, path);
	if (t->loop_fds[t->nloops] < 0)
		return lib_fail(t, E2TRIM_ERR_LOOP_BUSY,
				"attached to %s, which is in use", path);
	t->nloops++;
	return 0;
}

/*
 * libext2fs reads the mount table with getmntent(), whose one buffer all
 * threads share: two handles checking at once could each parse the
 * other's half-written line and miss a mount.  One check at a time.
 */
static pthread_mutex_t mount_check_lock = PTHREAD_MUTEX_INITIALIZER;

errcode_t hold_mount_check(const char *path, int *flags, char *mtpt,
			   size_t len)
{
	errcode_t err;

	pthread_mutex_lock(&mount_check_lock);
	err = ext2fs_check_mount_point(path, flags, mtpt, (int)len);
	pthread_mutex_unlock(&mount_check_lock);
	return err;
}

/* A loop device over the file that is not one of those held at open. */
static errcode_t loop_is_held(struct e2trim *t, void *ctx,
			      const char *name)
{
	char path[PATH_MAX], num[32];
	unsigned int maj, min;
	struct stat st;
	int i;

	(void)ctx;
	snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
	if (sysfs_read_line(path, num, sizeof(num)) ||
	    sscanf(num, "%u:%u", &maj, &min) != 2)
		return 0;
	for (i = 0; i < t->nloops; i++)
		if (!fstat(t->loop_fds[i], &st) &&
		    st.st_rdev == makedev(maj, min))
			return 0;
	return lib_fail(t, E2TRIM_ERR_LOOP_BUSY, "attached to /dev/%s since "
			"e2trim opened it; nothing more was discarded", name);
}

/* Now and then: again once RECHECK_NS have passed since the last look. */
#define RECHECK_NS 100000000LL

errcode_t recheck_loop_devices(struct e2trim *t)
{
	struct hold_bytes m;

	if (!t->file_known)
		return 0;
	t->loops_checked_ns = lib_mono_ns();
	hold_bytes_of(t, &m);
	return hold_each_loop(t, &m, loop_is_held, NULL);
}

errcode_t recheck_loop_devices_now_and_then(struct e2trim *t)
{
	if (!t->file_known || lib_mono_ns() - t->loops_checked_ns < RECHECK_NS)
		return 0;
	return recheck_loop_devices(t);
}

errcode_t hold_image_locks(struct e2trim *t)
{
	char name[64];
	pid_t pid;
	errcode_t err;

	/* a dry run writes nothing: it only looks */
	if (!t->opt.dryrun) {
		err = image_lock_take(t->fd);
		if (err)
			return lib_fail_cause(t, E2TRIM_ERR_OPEN, err,
					      "cannot take qemu's image locks");
	}
	if (!image_lock_other(t->fd, &pid))
		return 0;
	pid = image_lock_holder(t->fd, pid, name, sizeof(name));
	if (pid > 0)
		return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED,
				"held by %s, pid %d", name, (int)pid);
	return lib_fail(t, E2TRIM_ERR_IMAGE_LOCKED,
			"held by a process e2trim cannot see");
}

/*
 * An open for writing refused with EPERM even to root: a file marked
 * immutable or append-only (chattr +i, +a) takes no write and no punched
 * hole.  Its flags are read through a read-only open (FS_IOC_GETFLAGS).
 */
errcode_t hold_attr_refusal(struct e2trim *t)
{
	int fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int flags = 0, got;
	char c;

	if (fd < 0)
		return 0;
	got = !ioctl(fd, FS_IOC_GETFLAGS, &flags);
	close(fd);
	if (!got || !(flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
		return 0;
	c = flags & FS_IMMUTABLE_FL ? 'i' : 'a';
	lib_fail(t, E2TRIM_ERR_OPEN, "the file is marked %s (chattr +%c): "
		 "not even root may %s it", c == 'i' ? "immutable" :
		 "append-only", c, c == 'i' ? "write" : "punch holes in");
	lib_fix(t, E2TRIM_ERR_OPEN, "if it may change, chattr -%c it, then "
		"run e2trim again", c);
	return E2TRIM_ERR_OPEN;
}
