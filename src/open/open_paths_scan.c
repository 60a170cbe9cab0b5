// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_paths_scan.c - the processes and mounts that reach a file's bytes
 *
 * As fuser does: every process's /proc/PID/fd, each descriptor matched
 * by the file's device and inode (a regular file) or by its device
 * number (a loop device over the file), and a writer told by
 * /proc/PID/fdinfo's flags, read only for a descriptor that matched (one
 * statx() per descriptor, else).  A process this one may not look into
 * (another user namespace, no CAP_SYS_PTRACE) is not seen: as for fuser.
 *
 * FUSE: fuse2fs (e2fsprogs' FUSE driver) reads and writes the image file
 * itself, with no loop device and no lock, and mountinfo lists its mount
 * as "fuse.ext4" with the source as it was typed, often a relative name.
 * Resolving that name would need the daemon's working directory, which
 * is "/" once libfuse sent it to the background (fuse_daemonize()
 * chdir()s).  What does not depend on names: the daemon keeps the image
 * open for the whole mount beside /dev/fuse.  A process holding both
 * (the file, or a loop device over it: fuse2fs on /dev/loopN) is a FUSE
 * server of the bytes, read-write or not; its mount is the FUSE mount
 * whose source is one of the daemon's arguments (as typed, both).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "open_paths_scan.h"
#include "proc_fds.h"
#include "sysfs.h"

/* /dev/fuse is char 10:229 (Documentation/admin-guide/devices.txt) */
#define FUSE_DEV_MAJOR 10
#define FUSE_DEV_MINOR 229

/* One line of /proc/self/mountinfo, split in place. */
struct mnt_line {
	int id;
	dev_t dev;
	const char *dir, *type, *src;
};

/*
 * "ID PARENT MAJ:MIN ROOT DIR OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER";
 * 0 if @line is not one (proc(5)).
 */
static int mnt_split(char *line, struct mnt_line *ml)
{
	char *f[5], *sep, *save = NULL;
	unsigned int maj, min;
	int i;

	sep = strstr(line, " - ");
	if (!sep)
		return 0;
	*sep = '\0';
	for (i = 0; i < 5; i++) {
		f[i] = strtok_r(i ? NULL : line, " ", &save);
		if (!f[i])
			return 0;
	}
	if (sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return 0;
	ml->id = atoi(f[0]);
	ml->dev = makedev(maj, min);
	ml->dir = f[4];
	save = NULL;
	ml->type = strtok_r(sep + 3, " ", &save);
	ml->src = ml->type ? strtok_r(NULL, " \n", &save) : NULL;
	return ml->type && ml->src;
}

typedef int (*mnt_fn)(const struct mnt_line *ml, void *ctx);

/* Each mount, until @fn returns nonzero (returned). */
static int each_mount(mnt_fn fn, void *ctx)
{
	char line[3 * PATH_MAX];
	struct mnt_line ml;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ret = 0;

	while (f && !ret && fgets(line, sizeof(line), f))
		if (mnt_split(line, &ml))
			ret = fn(&ml, ctx);
	if (f)
		fclose(f);
	return ret;
}

/* One process's findings. */
struct proc_find {
	int holds_path, has_fuse, writes;
	int writes_file;	/* the file itself, not only a loop device */
	char what[PATH_MAX];	/* what the writer holds */
};

struct scan {
	struct e2trim *t;
	const struct hold_bytes *m;
	const dev_t *rdevs;
	unsigned int nrdevs;
	pid_t self;
	errcode_t err;		/* the refusal that stopped the walk */
};

/* one process looked at: what it holds of the bytes */
struct proc_look {
	const struct scan *s;
	struct proc_find pf;
};

/* fdinfo's "flags:" (octal); 0 if unreadable. */
static int fd_flags(pid_t pid, const char *fd, int *flags)
{
	char path[320], line[128];
	FILE *f;
	int got = 0;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!got && fgets(line, sizeof(line), f))
		got = sscanf(line, "flags: %o", (unsigned int *)flags) == 1;
	fclose(f);
	return got;
}

static int is_rdev(const struct scan *s, dev_t rdev)
{
	unsigned int i;

	for (i = 0; i < s->nrdevs; i++)
		if (s->rdevs[i] == rdev)
			return 1;
	return 0;
}

/* Descriptor @fd of @pid (proc_fds.c looked at it): the file, a device, /dev/fuse? */
static int look_at_fd(pid_t pid, const char *fd, const struct statx *sx,
		      void *ctx)
{
	struct proc_look *pl = ctx;
	const struct scan *s = pl->s;
	struct proc_find *pf = &pl->pf;
	dev_t rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	char path[64];
	int flags = 0;
	ssize_t n;

	if (S_ISCHR(sx->stx_mode) &&
	    rdev == makedev(FUSE_DEV_MAJOR, FUSE_DEV_MINOR)) {
		pf->has_fuse = 1;
		return 0;
	}
	if (!(S_ISREG(sx->stx_mode) && proc_statx_is(sx, s->m->dev, s->m->ino)) &&
	    !(S_ISBLK(sx->stx_mode) && is_rdev(s, rdev)))
		return 0;
	pf->holds_path = 1;
	if ((pf->writes_file || (pf->writes && S_ISBLK(sx->stx_mode))) ||
	    !fd_flags(pid, fd, &flags) || (flags & O_ACCMODE) == O_RDONLY)
		return 0;
	pf->writes = 1;
	pf->writes_file = !S_ISBLK(sx->stx_mode);
	snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, fd);
	n = readlink(path, pf->what, sizeof(pf->what) - 1);
	pf->what[n > 0 ? n : 0] = '\0';
	return 0;
}

/* @pid's parent, or -1. */
/* conventions: a pid, or -1 for none */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* "PID (COMM) STATE PPID": COMM may hold spaces and ')' */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

static void comm_of(pid_t pid, char *name, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (sysfs_read_line(path, name, len))
		snprintf(name, len, "?");
}

/* The arguments of @pid, NUL-separated in @buf; their length. */
static size_t args_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return n;
}

struct fuse_find {
	const char *args;
	size_t nargs;
	char dir[PATH_MAX], type[64];
};

static int has_arg(const struct fuse_find *ff, const char *word)
{
	size_t i;

	for (i = 0; i < ff->nargs; i += strlen(ff->args + i) + 1)
		if (!strcmp(ff->args + i, word))
			return 1;
	return 0;
}

/* A FUSE mount whose source the daemon was given: the last one wins. */
static int note_fuse_mount(const struct mnt_line *ml, void *ctx)
{
	struct fuse_find *ff = ctx;

	if (!strncmp(ml->type, "fuse", 4) && has_arg(ff, ml->src)) {
		snprintf(ff->dir, sizeof(ff->dir), "%s", ml->dir);
		snprintf(ff->type, sizeof(ff->type), "%s", ml->type);
	}
	return 0;
}

static errcode_t refuse_fuse(struct e2trim *t, pid_t pid, const char *comm)
{
	char args[4096];
	struct fuse_find ff = { args, 0, "", "" };

	ff.nargs = args_of(pid, args, sizeof(args));
	each_mount(note_fuse_mount, &ff);
	if (*ff.dir)
		return lib_fail(t, E2TRIM_ERR_BUSY, "mounted through FUSE "
				"(%s) on %s by %s, pid %d: umount %s first",
				ff.type, ff.dir, comm, (int)pid, ff.dir);
	return lib_fail(t, E2TRIM_ERR_BUSY, "served through FUSE by %s, "
			"pid %d: unmount its mount first", comm, (int)pid);
}

/*
 * util-linux's loop set-up (losetup -f, mount -o loop) asks the kernel
 * for a free loop device and opens it read-write; when another process
 * attached that one meanwhile (ours, over these bytes), its
 * LOOP_CONFIGURE fails and it tries the next.  For that moment it holds
 * a bound loop device over the bytes for writing, which it can only
 * (fail to) configure, never write through: no writer.  (An earlier
 * version believed a writer of a loop device once it still held it 20 ms
 * later: a losetup at nice 19 on a loaded machine held it longer, and a
 * boot hook's trim was refused 10.)  The same programs setting up a loop
 * device over the FILE hold the file itself, and are writers.
 */
static int loop_setup_only(pid_t pid)
{
	char comm[64];

	comm_of(pid, comm, sizeof(comm));
	return !strcmp(comm, "losetup") || !strcmp(comm, "mount");
}

/* One process: 0, or its refusal. */
static errcode_t look_at_proc(const struct scan *s, pid_t pid)
{
	struct proc_look pl = { .s = s };
	struct proc_find *pf = &pl.pf;
	char comm[64];

	proc_each_fd(pid, look_at_fd, &pl);
	if ((!pf->writes && !(pf->holds_path && pf->has_fuse)) ||
	    parent_of(pid) == s->self)
		return 0;
	if (!pf->writes_file && !(pf->holds_path && pf->has_fuse) &&
	    loop_setup_only(pid))
		return 0;
	comm_of(pid, comm, sizeof(comm));
	if (pf->holds_path && pf->has_fuse)
		return refuse_fuse(s->t, pid, comm);
	return lib_fail(s->t, E2TRIM_ERR_BUSY, "%s is open for writing by "
			"%s, pid %d", pf->what, comm, (int)pid);
}

/* proc_each_pid()'s callback: 1 stops it at a refusal, kept in s->err */
static int look_at_pid(pid_t pid, void *ctx)
{
	struct scan *s = ctx;

	s->err = look_at_proc(s, pid);
	return s->err != 0;
}

errcode_t open_paths_scan(struct e2trim *t, const struct hold_bytes *m,
			  const dev_t *rdevs, unsigned int nrdevs)
{
	struct scan s = { t, m, rdevs, nrdevs, getpid(), 0 };

	proc_each_pid(look_at_pid, &s);
	return s.err;
}

struct dev_mount {
	dev_t dev;
	char *dir;
	size_t len;
};

static int note_dev_mount(const struct mnt_line *ml, void *ctx)
{
	struct dev_mount *dm = ctx;

	if (ml->dev != dm->dev)
		return 0;
	snprintf(dm->dir, dm->len, "%s", ml->dir);
	return 1;
}

int open_paths_device_use(dev_t rdev, const char *name, char *use,
			  size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dev_mount dm = { rdev, dir, sizeof(dir) };
	struct dirent *de;
	DIR *holders;
	int found = 0;

	if (each_mount(note_dev_mount, &dm)) {
		snprintf(use, len, "mounted on %s", dir);
		return 1;
	}
	snprintf(path, sizeof(path), "/sys/block/%s/holders", name);
	holders = opendir(path);
	while (holders && !found && (de = readdir(holders)))
		if (de->d_name[0] != '.') {
			snprintf(use, len, "under /dev/%s (device-mapper, md)",
				 de->d_name);
			found = 1;
		}
	if (holders)
		closedir(holders);
	return found;
}
