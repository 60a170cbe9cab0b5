// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbd_server.c - which file the qemu-nbd e2trim started has open
 *
 * qemu-nbd opens a VM image by its name, from the image's folder (so
 * that relative backing and data file names resolve as qemu resolves
 * them): /proc/self/fd/N cannot be handed to it.  A name re-pointed
 * between e2trim's own open and qemu-nbd's would serve another file than
 * the one e2trim checked (issue 41.3).  So the server's own descriptors
 * are looked at once it answers: it is found by its stderr file (each
 * server gets a fresh one, nbd_io.c), and must hold the image file
 * e2trim opened, by device and inode.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "nbd_server.h"

/*
 * Is /proc/@pid/fd/@fd the file (@dev, @ino)?  Every process's stderr is
 * looked at: statx with AT_STATX_DONT_SYNC asks no server for a file on a
 * FUSE or network mount (one that hangs would hang a plain stat()), as
 * open_paths_scan.c does; the device and inode never change anyway.
 */
static int fd_is(const char *pid, const char *fd, dev_t dev, ino_t ino)
{
	char path[PATH_MAX];
	struct statx sx;

	snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, fd);
	return !statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO, &sx) &&
	       makedev(sx.stx_dev_major, sx.stx_dev_minor) == dev &&
	       sx.stx_ino == ino;
}

/* Has process @pid any descriptor on (@dev, @ino)? */
static int any_fd_is(const char *pid, dev_t dev, ino_t ino)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	dir = opendir(path);
	while (dir && !found && (de = readdir(dir)))
		found = de->d_name[0] != '.' && fd_is(pid, de->d_name, dev, ino);
	if (dir)
		closedir(dir);
	return found;
}

errcode_t e2t_nbd_server_holds(const struct nbd_conn *c, dev_t dev, ino_t ino,
			   int *held)
{
	struct dirent *de;
	DIR *dir;
	errcode_t ret = ENOENT;

	*held = 0;
	if (!c->err_ino)
		return ENOENT;
	dir = opendir("/proc");
	if (!dir)
		return ENOENT;
	while (ret && (de = readdir(dir))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    !fd_is(de->d_name, "2", c->err_dev, c->err_ino))
			continue;
		*held = any_fd_is(de->d_name, dev, ino);
		ret = 0;
	}
	closedir(dir);
	return ret;
}
