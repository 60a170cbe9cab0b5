// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_chain.c - the files a VM image names, gated as targets
 *
 * A qcow2 names other files in its header: an external data file, where
 * its clusters live and so where every discard lands, and a backing
 * file, itself perhaps a qcow2 with a backing file and a data file of
 * its own.  qemu-nbd follows those names wherever they point, and the
 * header is bytes anyone who could write the image chose.  So every
 * named file passes the gates a target named on the command line
 * passes, before qemu-nbd opens it:
 *  - a plain file name: "proto:rest" and "json:{...}" are qemu's syntax
 *    for other drivers and options, never data (refused, 3);
 *  - a regular file, not mounted (10; a loop device holding a mounted
 *    filesystem is the first case), not a loop device's backing file
 *    (10: it can be written or mounted through that device at any time);
 *  - the data file, where discards land: owned by the image's owner (3:
 *    a header must not reach another user's file), and not held by any
 *    other qemu (26); a backing file is only read (qemu-nbd opens it
 *    read-only and e2trim never opens it for writing), so readers
 *    sharing it are fine and only a writer is refused (26).
 * The walk runs again just before the writable server starts (without
 * the lock test: our own read-only server holds those locks, and the
 * writable qemu-nbd is itself refused by any other holder).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2trim_int.h"
#include "image_lock.h"
#include "image_qcow2.h"
#include "open_chain.h"
#include "open_hold.h"

/* a deeper chain is a damaged or hostile header */
#define CHAIN_MAX 64

struct chain {
	struct e2trim *t;
	uid_t owner;			/* of the image file */
	int reopen;			/* the second walk: no lock test */
	unsigned int n;
	struct { dev_t dev; ino_t ino; } seen[CHAIN_MAX + 1];
};

/* "proto:rest" or "json:...": a colon before any slash */
static int plain_name(const char *name)
{
	const char *colon = strchr(name, ':'), *slash = strchr(name, '/');

	return !colon || (slash && slash < colon);
}

/* @name as qemu takes it: absolute, or beside the file @namer. */
static void resolve(const char *namer, const char *name, char *out,
		    size_t len)
{
	const char *slash = strrchr(namer, '/');

	if (name[0] == '/' || !slash)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%.*s/%s", (int)(slash - namer + 1) - 1,
			 namer, name);
}

static errcode_t not_plain(struct chain *c, const char *role,
			   const char *name)
{
	return lib_fail(c->t, E2TRIM_ERR_USAGE, "its %s is named \"%s\", "
			"which qemu would read as a protocol or options, not "
			"a file; give it a plain file name (qemu-img amend, "
			"or qemu-img rebase -u for a backing file)", role,
			name);
}

static errcode_t check_mounted(struct chain *c, const char *role,
			       const char *path)
{
	char mtpt[PATH_MAX + 1] = "";
	int flags = 0;
	errcode_t err = hold_mount_check(path, &flags, mtpt, sizeof(mtpt));

	if (err)
		return lib_fail_cause(c->t, E2TRIM_ERR_MOUNT_CHECK, err,
				      "its %s %s", role, path);
	if (flags & (EXT2_MF_MOUNTED | EXT2_MF_SWAP | EXT2_MF_BUSY))
		return lib_fail(c->t, E2TRIM_ERR_MOUNTED, "its %s %s is "
				"mounted%s%s or in use: the image's I/O would "
				"land there; give the image a file of its own",
				role, path, mtpt[0] ? " on " : "", mtpt);
	return 0;
}

/* Held by another qemu: any lock on a data file, a writer's on a backing. */
static errcode_t check_locks(struct chain *c, const char *role,
			     const char *path, int written)
{
	char name[64];
	pid_t pid;
	int fd, held;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return lib_fail_cause(c->t, E2TRIM_ERR_OPEN, errno, "its %s %s",
				      role, path);
	held = written ? image_lock_other(fd, &pid) :
			 image_lock_writer(fd, &pid);
	if (held)
		pid = image_lock_holder(fd, pid, name, sizeof(name));
	close(fd);
	if (!held)
		return 0;
	if (pid > 0)
		return lib_fail(c->t, E2TRIM_ERR_IMAGE_LOCKED, "its %s %s is "
				"held by %s, pid %d", role, path, name,
				(int)pid);
	return lib_fail(c->t, E2TRIM_ERR_IMAGE_LOCKED, "its %s %s is held "
			"by a process e2trim cannot see", role, path);
}

/* The gates of one named file; @written: discards land in it. */
static errcode_t gate_file(struct chain *c, const char *role,
			   const char *path, int written, struct stat *st)
{
	char loop[64];
	errcode_t err;

	if (stat(path, st))
		return lib_fail_cause(c->t, E2TRIM_ERR_OPEN, errno, "its %s %s",
				      role, path);
	err = check_mounted(c, role, path);
	if (err)
		return err;
	if (!S_ISREG(st->st_mode))
		return lib_fail(c->t, E2TRIM_ERR_USAGE, "its %s %s is not a "
				"regular file; e2trim follows a VM image only "
				"into files: convert the image to one that "
				"holds its data (qemu-img convert -O qcow2)",
				role, path);
	if (loop_over_file(st, loop, sizeof(loop)))
		return lib_fail(c->t, E2TRIM_ERR_LOOP_BUSY, "its %s %s is "
				"attached to %s; detach it (losetup -d %s) and "
				"run e2trim again", role, path, loop, loop);
	if (written && st->st_uid != c->owner)
		return lib_fail(c->t, E2TRIM_ERR_USAGE, "its %s %s belongs to "
				"uid %u, the image to uid %u: e2trim frees "
				"space only in files of the image's owner; "
				"point the image at its own data file, or "
				"chown it if it is the image's", role, path,
				(unsigned int)st->st_uid,
				(unsigned int)c->owner);
	return c->reopen ? 0 : check_locks(c, role, path, written);
}

/* A file met twice is a loop in the chain. */
static int seen_before(struct chain *c, const struct stat *st)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (c->seen[i].dev == st->st_dev && c->seen[i].ino == st->st_ino)
			return 1;
	if (c->n <= CHAIN_MAX) {
		c->seen[c->n].dev = st->st_dev;
		c->seen[c->n].ino = st->st_ino;
		c->n++;
	}
	return 0;
}

/*
 * A backing layer's own data file: qemu 7.2 opens a relative name from
 * its working directory (the top image's folder, nbd_io.c), a later one
 * may take it beside the layer: each candidate that exists is gated (if
 * neither does, the first, which refuses it).
 */
static errcode_t layer_data_file(struct chain *c, const char *layer,
				 const char *name)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct stat st;
	errcode_t err;

	if (!plain_name(name))
		return not_plain(c, "backing file's data file", name);
	resolve(c->t->path, name, a, sizeof(a));
	resolve(layer, name, b, sizeof(b));
	/* the one that exists; neither: the gate says it cannot be opened */
	if (!strcmp(a, b) || !access(a, F_OK) || access(b, F_OK)) {
		err = gate_file(c, "backing file's data file", a, 0, &st);
		if (err)
			return err;
	}
	if (strcmp(a, b) && !access(b, F_OK))
		return gate_file(c, "backing file's data file", b, 0, &st);
	return 0;
}

/* One backing layer @path: gated, then its own names, into @q. */
static errcode_t backing_layer(struct chain *c, const char *path,
			       struct qcow2_facts *q)
{
	struct stat st;
	errcode_t err;
	int fd, is_qcow;

	err = gate_file(c, "backing file", path, 0, &st);
	if (err)
		return err;
	if (seen_before(c, &st))
		return lib_fail(c->t, E2TRIM_ERR_USAGE, "its backing chain "
				"comes back to %s; fix the chain with qemu-img "
				"rebase", path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return lib_fail_cause(c->t, E2TRIM_ERR_OPEN, errno,
				      "its backing file %s", path);
	/* another format ends what e2trim can follow (a raw base) */
	is_qcow = !qcow2_facts_read(fd, q);
	close(fd);
	if (!is_qcow)
		memset(q, 0, sizeof(*q));
	if (q->data_file[0])
		return layer_data_file(c, path, q->data_file);
	return 0;
}

static errcode_t walk(struct chain *c, int fd, struct qcow2_facts *q)
{
	char path[PATH_MAX], namer[PATH_MAX];
	struct stat st;
	unsigned int depth;
	errcode_t err;

	if (fstat(fd, &st))
		return lib_fail_cause(c->t, E2TRIM_ERR_OPEN, errno, NULL);
	c->owner = st.st_uid;
	seen_before(c, &st);
	if (qcow2_facts_read(fd, q))
		return 0;	/* not a qcow2 header: nothing named */
	if (q->data_file[0]) {
		if (!plain_name(q->data_file))
			return not_plain(c, "data file", q->data_file);
		resolve(c->t->path, q->data_file, path, sizeof(path));
		err = gate_file(c, "data file", path, 1, &st);
		if (err)
			return err;
	}
	snprintf(namer, sizeof(namer), "%s", c->t->path);
	for (depth = 0; q->backing_file[0]; depth++) {
		if (depth == CHAIN_MAX)
			return lib_fail(c->t, E2TRIM_ERR_USAGE, "its backing "
					"chain is deeper than %d files; flatten "
					"it with qemu-img convert", CHAIN_MAX);
		if (!plain_name(q->backing_file))
			return not_plain(c, "backing file", q->backing_file);
		resolve(namer, q->backing_file, path, sizeof(path));
		err = backing_layer(c, path, q);
		if (err)
			return err;
		snprintf(namer, sizeof(namer), "%s", path);
	}
	return 0;
}

errcode_t open_chain_check(struct e2trim *t, int fd, int reopen)
{
	struct qcow2_facts *q = malloc(sizeof(*q));
	struct chain *c = calloc(1, sizeof(*c));
	errcode_t err;

	if (!q || !c) {
		free(q);
		free(c);
		return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	}
	c->t = t;
	c->reopen = reopen;
	err = walk(c, fd, q);
	free(q);
	free(c);
	return err;
}

int open_chain_same_data_file(const struct e2trim *t, int fd, int data_fd)
{
	struct qcow2_facts *q = malloc(sizeof(*q));
	char path[PATH_MAX];
	struct stat a, b;
	int same = 1;

	if (!q)
		return 0;
	if (!qcow2_facts_read(fd, q) && q->data_file[0]) {
		resolve(t->path, q->data_file, path, sizeof(path));
		same = data_fd >= 0 && !stat(path, &a) && !fstat(data_fd, &b) &&
		       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	}
	free(q);
	return same;
}
