// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * image_lock.c - qemu's image locks on a raw image file
 *
 * qemu (file-posix, "locking" on by default; qemu-system, qemu-nbd,
 * qemu-storage-daemon, qemu-img) marks an image it has open with shared
 * OFD locks of one byte each: byte 100 + b for every permission bit b it
 * holds, byte 200 + b for every one it will not share (bit 0 consistent
 * read, 1 write, 2 write unchanged, 3 resize).  An opener that wants b
 * fails if another holds 200 + b; one that will not share b fails if
 * another holds 100 + b.  A raw image that a running VM writes to carries
 * these locks and nothing else tells it is in use: the file has no
 * loop device and no mount.
 *
 * e2trim takes the locks of a writer that shares no write and no resize
 * (100, 101, 201, 203), so that a VM or a qemu-nbd started during the
 * run fails with qemu's 'Failed to get "write" lock' instead of writing
 * into blocks being punched; then it asks whether anyone else holds any
 * of the bytes.  Taking first, asking second leaves no window between
 * the two.  OFD locks belong to the open file description: closing some
 * other descriptor of the same file (qemu-img info, a second open) does
 * not drop them, unlike POSIX locks.
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

#include "image_lock.h"

#define QEMU_PERM_BASE 100
#define QEMU_SHARED_BASE 200
/* qemu 7.2 uses 4 bits (5 before 6.2): look at a few more */
#define QEMU_LOCK_BITS 8

enum { PERM_CONSISTENT_READ, PERM_WRITE, PERM_WRITE_UNCHANGED, PERM_RESIZE };

static errcode_t lock_byte(int fd, off_t off)
{
	struct flock fl = {
		.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = off,
		.l_len = 1,
	};

	return fcntl(fd, F_OFD_SETLK, &fl) ? errno : 0;
}

errcode_t image_lock_take(int fd)
{
	static const off_t bytes[] = {
		QEMU_PERM_BASE + PERM_CONSISTENT_READ,
		QEMU_PERM_BASE + PERM_WRITE,
		QEMU_SHARED_BASE + PERM_WRITE,
		QEMU_SHARED_BASE + PERM_RESIZE,
	};
	size_t i;
	errcode_t rc;

	for (i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		rc = lock_byte(fd, bytes[i]);
		/* a filesystem without OFD locks: nobody can hold them either */
		if (rc == EINVAL || rc == EOPNOTSUPP || rc == ENOLCK)
			return 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* Does another owner hold a lock in [@start, @start + @len)? */
static int other_holds(int fd, off_t start, off_t len, pid_t *pid)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start,
		.l_len = len,
	};

	if (fcntl(fd, F_OFD_GETLK, &fl))
		return 0;
	if (fl.l_type == F_UNLCK)
		return 0;
	/* a POSIX lock names its process; an OFD lock says -1 */
	*pid = fl.l_pid;
	return 1;
}

int image_lock_other(int fd, pid_t *pid)
{
	*pid = -1;
	return other_holds(fd, QEMU_PERM_BASE, QEMU_LOCK_BITS, pid) ||
	       other_holds(fd, QEMU_SHARED_BASE, QEMU_LOCK_BITS, pid);
}

int image_lock_writer(int fd, pid_t *pid)
{
	*pid = -1;
	return other_holds(fd, QEMU_PERM_BASE + PERM_WRITE, 1, pid);
}

/*
 * Does /proc/@pid/fdinfo/@fd list a lock on (@dev, @ino) in qemu's
 * bytes?  Its lines read "lock:\t1: OFDLCK ADVISORY  READ -1 fe:00:1234
 * 100 101" (major and minor in hex).
 */
static int fdinfo_locks(const char *path, dev_t dev, ino_t ino)
{
	char line[256], *p;
	unsigned int maj, min;
	unsigned long long i, start;
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "lock:", 5))
			continue;
		p = strchr(line, ':');
		p = p ? strchr(p + 1, ':') : NULL;	/* after "1:" */
		/* the device is the first field with two colons in it */
		while (p && *p) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (sscanf(p, "%x:%x:%llu %llu", &maj, &min, &i,
				   &start) == 4)
				break;
			p += strcspn(p, " \t");
		}
		if (p && *p && makedev(maj, min) == dev && i == ino &&
		    start >= QEMU_PERM_BASE &&
		    start < QEMU_SHARED_BASE + QEMU_LOCK_BITS)
			found = 1;
	}
	fclose(f);
	return found;
}

/* Has process @pid a descriptor of (@dev, @ino) with a lock in fdinfo? */
static int pid_holds(const char *pid, dev_t dev, ino_t ino)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, de->d_name);
		if (stat(path, &st) || st.st_dev != dev || st.st_ino != ino)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid,
			 de->d_name);
		found = fdinfo_locks(path, dev, ino);
	}
	closedir(dir);
	return found;
}

static void comm_of(pid_t pid, char *name, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(name, len, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, (int)len, f))
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
}

/* conventions: a pid, or -1 for none, as the header says */
pid_t image_lock_holder(int fd, pid_t hint, char *name, size_t len)
{
	struct dirent *de;
	struct stat st;
	pid_t pid = -1, self = getpid();
	DIR *dir;

	name[0] = '\0';
	if (hint > 0) {
		comm_of(hint, name, len);
		return hint;
	}
	if (fstat(fd, &st))
		return -1;
	dir = opendir("/proc");
	if (!dir)
		return -1;
	while (pid < 0 && (de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    atoi(de->d_name) == self)
			continue;
		if (pid_holds(de->d_name, st.st_dev, st.st_ino))
			pid = atoi(de->d_name);
	}
	closedir(dir);
	if (pid > 0)
		comm_of(pid, name, len);
	return pid;
}
