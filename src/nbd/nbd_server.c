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
#include <errno.h>

#include "nbd_server.h"
#include "proc_fds.h"

struct server_find {
	const struct nbd_conn *c;
	dev_t dev;
	ino_t ino;
	int held;
};

static int holds_image(pid_t pid, const char *fd, const struct statx *sx,
		       void *ctx)
{
	const struct server_find *sf = ctx;

	(void)pid;
	(void)fd;
	return proc_statx_is(sx, sf->dev, sf->ino);
}

/*
 * The server is the process whose stderr is its own file: then whether
 * it holds the image (1 stops the walk: found, one way or the other).
 */
static int server_is(pid_t pid, void *ctx)
{
	struct server_find *sf = ctx;
	struct statx sx;

	if (!proc_fd_statx(pid, "2", &sx) ||
	    !proc_statx_is(&sx, sf->c->err_dev, sf->c->err_ino))
		return 0;
	sf->held = proc_each_fd(pid, holds_image, sf);
	return 1;
}

errcode_t e2t_nbd_server_holds(const struct nbd_conn *c, dev_t dev, ino_t ino,
			   int *held)
{
	struct server_find sf = { c, dev, ino, 0 };

	*held = 0;
	if (!c->err_ino || !proc_each_pid(server_is, &sf))
		return ENOENT;
	*held = sf.held;
	return 0;
}
