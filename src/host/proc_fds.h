/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc_fds.h - every process's open files, as fuser looks at them
 *              (proc_fds.c)
 */
#ifndef E2TRIM_PROC_FDS_H
#define E2TRIM_PROC_FDS_H

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

/* Each returns 0 to go on, anything else to stop the walk with it. */
typedef int (*proc_pid_fn)(pid_t pid, void *ctx);
typedef int (*proc_fd_fn)(pid_t pid, const char *fd, const struct statx *sx,
			  void *ctx);

/* @fn(pid) for every process but this one; what stopped it, or 0. */
int proc_each_pid(proc_pid_fn fn, void *ctx);

/* @fn for every descriptor of @pid that can be looked at; as above. */
int proc_each_fd(pid_t pid, proc_fd_fn fn, void *ctx);

/* /proc/@pid/fd/@fd looked at (type, inode, devices): 1, or 0 if gone. */
int proc_fd_statx(pid_t pid, const char *fd, struct statx *sx);

/* Is @sx the file (@dev, @ino)? */
static inline int proc_statx_is(const struct statx *sx, dev_t dev, ino_t ino)
{
	return sx->stx_ino == ino &&
	       makedev(sx->stx_dev_major, sx->stx_dev_minor) == dev;
}

#endif /* E2TRIM_PROC_FDS_H */
