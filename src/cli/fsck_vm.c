// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck_vm.c - a VM image's content as a file e2fsck can check and fix
 *
 * e2fsck reads raw bytes; a qcow2 (vmdk, ...) needs qemu in between.
 * nbdfuse starts qemu-nbd by systemd socket activation (the way the
 * library starts it for the trim: no port, no socket path of ours) and
 * shows the export as one file under a FUSE mount.  qemu-nbd takes the
 * image's lock, so no VM or other qemu can open the image while e2fsck
 * writes it, and it exits when nbdfuse closes the connection, so the
 * unmount is the only thing to undo: after it nbdfuse exits, closing
 * the connection, and libnbd waits for qemu-nbd.
 *
 * Both run in a session of their own: a terminal's Ctrl-C reaches
 * e2fsck (which stops cleanly) but not the mount under it, and e2trim,
 * which only records the signal, takes the mount down itself afterwards.
 * The folder (mount point and nbdfuse's pid file) is made with mkdtemp()
 * under $TMPDIR and removed on release.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "fsck_target.h"

extern char **environ;

/* How long nbdfuse may take to serve (a guard against a hang only). */
#define READY_TICKS 6000		/* of 10 ms: one minute */

static const struct timespec tick = { 0, 10 * 1000 * 1000 };

/* nbdfuse has written its pid file: the mount serves. */
static int wait_ready(struct fsck_target *ft, char *why, size_t len)
{
	char pidfile[PATH_MAX + 8];
	int i, status;

	snprintf(pidfile, sizeof(pidfile), "%s/pid", ft->dir);
	for (i = 0; i < READY_TICKS; i++) {
		if (!access(pidfile, F_OK))
			return 0;
		if (waitpid(ft->fuse_pid, &status, WNOHANG) == ft->fuse_pid) {
			ft->fuse_pid = 0;
			snprintf(why, len, "nbdfuse and qemu-nbd could not "
				 "serve the image (their messages above)");
			return -EIO;
		}
		nanosleep(&tick, NULL);
	}
	snprintf(why, len, "nbdfuse did not serve the image in a minute");
	return -ETIMEDOUT;
}

/* The image's folder, and its name there as qemu must read it: "./name". */
static int split(const char *path, char *dir, size_t dlen, char *name,
		 size_t nlen)
{
	const char *slash = strrchr(path, '/');
	int rc;

	if (!slash)
		rc = snprintf(dir, dlen, ".");
	else
		rc = snprintf(dir, dlen, "%.*s",
			      slash == path ? 1 : (int)(slash - path), path);
	if (rc < 0 || (size_t)rc >= dlen)
		return -ENAMETOOLONG;
	/* qemu reads "proto:rest" as a protocol, "./" never */
	rc = snprintf(name, nlen, "./%s", slash ? slash + 1 : path);
	return rc < 0 || (size_t)rc >= nlen ? -ENAMETOOLONG : 0;
}

static int spawn_nbdfuse(struct fsck_target *ft, const char *path,
			 const char *format, int read_only)
{
	char dir[PATH_MAX], name[PATH_MAX + 2], file[PATH_MAX + 16];
	char pidfile[PATH_MAX + 8];
	const char *argv[16];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int n = 0, rc;

	rc = split(path, dir, sizeof(dir), name, sizeof(name));
	if (rc)
		return rc;
	snprintf(file, sizeof(file), "%s/disk", ft->mnt);
	snprintf(pidfile, sizeof(pidfile), "%s/pid", ft->dir);
	argv[n++] = "nbdfuse";
	argv[n++] = "-P";
	argv[n++] = pidfile;
	if (read_only)
		argv[n++] = "-r";
	argv[n++] = file;
	argv[n++] = "--socket-activation";
	argv[n++] = "qemu-nbd";
	argv[n++] = "-f";
	argv[n++] = format;
	if (read_only)
		argv[n++] = "--read-only";
	argv[n++] = name;
	argv[n] = NULL;

	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return -rc;
	rc = posix_spawnattr_init(&at);
	if (rc) {
		posix_spawn_file_actions_destroy(&fa);
		return -rc;
	}
	/* qemu opens a relative backing or data file name from its cwd */
	rc = posix_spawn_file_actions_addchdir_np(&fa, dir);
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID);
	if (!rc)
		rc = posix_spawnp(&ft->fuse_pid, argv[0], &fa, &at,
				  (char *const *)argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		ft->fuse_pid = 0;
	return -rc;
}

int fsck_vm_mount(struct fsck_target *ft, const char *path,
		  const char *format, int read_only, char *why, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	int rc;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	rc = snprintf(ft->dir, sizeof(ft->dir), "%s/e2trim-fsck.XXXXXX", tmp);
	if (rc < 0 || (size_t)rc >= sizeof(ft->dir) || !mkdtemp(ft->dir)) {
		rc = rc < 0 || (size_t)rc >= sizeof(ft->dir) ? ENAMETOOLONG
							      : errno;
		snprintf(why, len, "cannot make a folder for the image's "
			 "mount in %s (TMPDIR): %s", tmp, strerror(rc));
		ft->dir[0] = '\0';
		return -rc;
	}
	snprintf(ft->mnt, sizeof(ft->mnt), "%s/mnt", ft->dir);
	if (mkdir(ft->mnt, 0700)) {
		rc = errno;
		ft->mnt[0] = '\0';
		snprintf(why, len, "%s: %s", ft->dir, strerror(rc));
		return -rc;
	}
	rc = spawn_nbdfuse(ft, path, format, read_only);
	if (rc) {
		snprintf(why, len, "cannot run nbdfuse (Debian libnbd-bin), "
			 "which shows the image to e2fsck: %s", strerror(-rc));
		return rc;
	}
	rc = wait_ready(ft, why, len);
	if (rc)
		return rc;
	snprintf(ft->name, sizeof(ft->name), "%s/disk", ft->mnt);
	return 0;
}

/*
 * Unmount (as root directly; else through fusermount3), then wait for
 * nbdfuse, which exits once unmounted; qemu-nbd has exited by then.
 * A mount that will not go (still busy) is detached lazily, so that
 * nbdfuse ends anyway and the image's lock is given back.
 */
static int unmount_wait(struct fsck_target *ft)
{
	const char *argv[] = { "fusermount3", "-u", "-z", ft->mnt, NULL };
	int status, rc = 0;
	pid_t pid;

	if (umount2(ft->mnt, 0) && umount2(ft->mnt, MNT_DETACH) &&
	    errno != EINVAL) {
		if (!posix_spawnp(&pid, argv[0], NULL, NULL,
				  (char *const *)argv, environ))
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
	}
	while (waitpid(ft->fuse_pid, &status, 0) < 0)
		if (errno != EINTR) {
			rc = -1;
			break;
		}
	ft->fuse_pid = 0;
	return rc;
}

int fsck_vm_release(struct fsck_target *ft)
{
	char pidfile[PATH_MAX + 8];
	int rc = 0;

	if (ft->fuse_pid > 0 && unmount_wait(ft)) {
		warnx_target(NULL, "%s: nbdfuse did not exit", ft->mnt);
		rc = -1;
	}
	if (ft->mnt[0] && rmdir(ft->mnt) && errno != ENOENT) {
		warnx_target(NULL, "%s: %s", ft->mnt, strerror(errno));
		rc = -1;
	}
	ft->mnt[0] = '\0';
	if (ft->dir[0]) {
		snprintf(pidfile, sizeof(pidfile), "%s/pid", ft->dir);
		unlink(pidfile);
		if (rmdir(ft->dir) && errno != ENOENT) {
			warnx_target(NULL, "%s: %s", ft->dir, strerror(errno));
			rc = -1;
		}
	}
	ft->dir[0] = '\0';
	return rc;
}
