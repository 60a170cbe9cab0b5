// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * proc_fds.c - every process's open files, as fuser looks at them
 *
 * /proc/PID/fd/N is looked at with statx(AT_STATX_DONT_SYNC): FUSE and
 * NFS answer from the attributes they have and ask no server, where a
 * plain stat() of a file on a mount whose server hangs would hang too;
 * the device and inode of an open file never change anyway.  A process
 * this one may not look into (another user namespace, no
 * CAP_SYS_PTRACE) is not seen, as for fuser.  Used to find who writes a
 * target's bytes (open_paths_scan.c) and which file e2trim's own
 * qemu-nbd holds (nbd_server.c).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proc_fds.h"

int proc_each_pid(proc_pid_fn fn, void *ctx)
{
	pid_t self = getpid(), pid;
	struct dirent *de;
	DIR *dir = opendir("/proc");
	int ret = 0;

	while (dir && !ret && (de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (pid != self)
			ret = fn(pid, ctx);
	}
	if (dir)
		closedir(dir);
	return ret;
}

int proc_fd_statx(pid_t pid, const char *fd, struct statx *sx)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, fd);
	return !statx(AT_FDCWD, path, AT_STATX_DONT_SYNC,
		      STATX_TYPE | STATX_INO, sx);
}

int proc_each_fd(pid_t pid, proc_fd_fn fn, void *ctx)
{
	char path[64];
	struct statx sx;
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	while (dir && !ret && (de = readdir(dir)))
		if (de->d_name[0] != '.' && proc_fd_statx(pid, de->d_name, &sx))
			ret = fn(pid, de->d_name, &sx, ctx);
	if (dir)
		closedir(dir);
	return ret;
}
