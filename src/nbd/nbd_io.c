// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbd_io.c - the NBD connection, and libext2fs reading through it
 *
 * qemu-nbd is started through libnbd's systemd socket activation: libnbd
 * makes the socket, forks, and the server exits when the handle closes,
 * so no server is ever left behind and no port or socket path is chosen
 * by us.  --discard=unmap is what makes qemu free clusters: without it
 * qemu-nbd still accepts every trim and frees nothing.
 *
 * A refusal by the server (qemu's image lock above all: another qemu has
 * the image open) reaches the client only as a closed connection; the
 * words are on the server's stderr.  So the server runs through
 * `sh -c 'exec 2>FILE; exec setsid "$@"'` (exec keeps the process id that
 * socket activation's LISTEN_PID names; setsid does not fork in a child
 * that leads no process group) and FILE is read on failure.  In a session
 * of its own the server does not get the terminal's Ctrl-C: e2trim stops
 * cleanly on SIGINT, and the trims in flight still complete.
 *
 * libext2fs's io managers are opened by name only: the name given to
 * ext2fs_open2() carries the connection's address ("nbd-conn:0x..."),
 * and the connection a magic number, so nothing global is needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <libnbd.h>

#include "io_readonly.h"
#include "image_rbd.h"
#include "nbd_dl.h"
#include "nbd_io.h"
#include "nbd_readahead.h"

#define CONN_PREFIX "nbd-conn:"
#define CONN_MAGIC 0x6e626465u		/* "nbde" */

/* The connection and the magic that io_open() checks, one allocation. */
struct conn_box {
	unsigned int magic;
	struct nbd_conn c;
};

int e2t_nbd_is_uri(const char *path)
{
	static const char *const schemes[] = {
		"nbd://", "nbds://", "nbd+unix://", "nbds+unix://",
		"nbd+vsock://", "nbds+vsock://",
	};
	size_t i;

	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (!strncmp(path, schemes[i], strlen(schemes[i])))
			return 1;
	return 0;
}

static enum nbd_open_fail new_conn(struct nbd_conn **out, char *why,
				   size_t len)
{
	struct conn_box *box;
	const char *e;

	*out = NULL;
	if (e2t_nbd_dl_load(&e)) {
		snprintf(why, len, "%s", e);
		return NBD_OPEN_NO_LIBNBD;
	}
	box = calloc(1, sizeof(*box));
	if (!box)
		return NBD_OPEN_NO_MEMORY;
	box->magic = CONN_MAGIC;
	box->c.data_fd = -1;
	box->c.owner_pid = getpid();
	box->c.h = nbd_create();
	if (!box->c.h) {
		free(box);
		return NBD_OPEN_NO_MEMORY;
	}
	snprintf(box->c.name, sizeof(box->c.name), CONN_PREFIX "%p",
		 (void *)box);
	/* ask for block status, to trim only what is allocated */
	nbd_add_meta_context(box->c.h, LIBNBD_CONTEXT_BASE_ALLOCATION);
	/* and which layer of a backing chain holds it */
	nbd_add_meta_context(box->c.h, NBD_CONTEXT_DEPTH);
	*out = &box->c;
	return NBD_OPEN_OK;
}

static struct conn_box *box_of(struct nbd_conn *c)
{
	return (struct conn_box *)((char *)c - offsetof(struct conn_box, c));
}

/* What the server said about itself, once connected. */
static void read_caps(struct nbd_conn *c)
{
	int64_t v;

	v = nbd_get_size(c->h);
	c->srv.size_bytes = v > 0 ? (uint64_t)v : 0;
	c->srv.can_trim = nbd_can_trim(c->h) == 1 && nbd_is_read_only(c->h) != 1;
	c->srv.has_status = nbd_can_meta_context(c->h,
					     LIBNBD_CONTEXT_BASE_ALLOCATION) == 1;
	c->srv.has_depth = c->srv.has_status &&
		       nbd_can_meta_context(c->h, NBD_CONTEXT_DEPTH) == 1;
	v = nbd_get_block_size(c->h, LIBNBD_SIZE_MINIMUM);
	c->srv.min_block = v > 0 ? (uint64_t)v : 0;
	v = nbd_get_block_size(c->h, LIBNBD_SIZE_PREFERRED);
	c->srv.pref_block = v > 0 ? (uint64_t)v : 0;
	v = nbd_get_block_size(c->h, LIBNBD_SIZE_MAXIMUM);
	c->srv.max_block = v > 0 ? (uint64_t)v : 0;
}

static void nbd_why(char *why, size_t len)
{
	const char *e = nbd_get_error();

	snprintf(why, len, "%s", e ? e : "cannot connect");
}

/* After a connect call that returned @rc: its capabilities, or why not. */
static enum nbd_open_fail connected(struct nbd_conn **out, int rc, char *why,
				    size_t len)
{
	if (rc == -1) {
		nbd_why(why, len);
		e2t_nbd_conn_close(*out);
		*out = NULL;
		return NBD_OPEN_FAILED;
	}
	read_caps(*out);
	return NBD_OPEN_OK;
}

enum nbd_open_fail e2t_nbd_conn_open_uri(struct nbd_conn **out, const char *uri,
				     char *why, size_t len)
{
	enum nbd_open_fail rc = new_conn(out, why, len);

	if (rc)
		return rc;
	return connected(out, nbd_connect_uri((*out)->h, uri), why, len);
}

/*
 * The server's stderr, first line that says something, into @why.
 * Returns 1 if it is qemu's image lock refusing.
 */
static int read_server_stderr(const char *path, char *why, size_t len)
{
	char line[512];
	int locked = 0, have = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		/* 'Failed to get "write" lock', 'Failed to get shared ...' */
		if (strstr(line, "Failed to get") && strstr(line, "lock")) {
			locked = 1;
			snprintf(why, len, "%s", line);
			break;
		}
		if (!have)
			snprintf(why, len, "%s", line);
		have = 1;
	}
	fclose(f);
	return locked;
}

/*
 * A file for the server's stderr; @path gets its name.  0 or errno, and
 * then @why says where it could not be made (a TMPDIR that is missing or
 * read-only is not a lack of memory).
 */
static errcode_t make_err_file(char *path, size_t len, char *why,
			       size_t why_len)
{
	const char *dir = getenv("TMPDIR");
	int fd, err;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, len, "%s/e2trim-nbd.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		snprintf(why, why_len, "cannot make a temporary file in %s%s "
			 "for qemu-nbd's messages: %s", dir,
			 getenv("TMPDIR") ? " (TMPDIR)" : "", strerror(err));
		return err;
	}
	close(fd);
	return 0;
}

enum nbd_open_fail e2t_nbd_conn_open_argv(struct nbd_conn **out, char **argv,
				      char *why, size_t len)
{
	enum nbd_open_fail rc = new_conn(out, why, len);

	if (rc)
		return rc;
	return connected(out,
			 nbd_connect_systemd_socket_activation((*out)->h, argv),
			 why, len);
}

/*
 * The folder of the image file @path and its name in it ("./name": qemu
 * reads "proto:rest" as a protocol when the colon comes before any
 * slash).  qemu-nbd runs in that folder: qemu (7.2) opens a relative
 * external data file name from its working directory, while a backing
 * file's is taken beside the image that names it; in the image's own
 * folder both are the file beside the image, the one e2trim's gates
 * looked at (open_chain.c).
 */
static errcode_t split_image_path(const char *path, char **dir, char **name)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		*dir = strdup(".");
		*name = *dir ? malloc(strlen(path) + 3) : NULL;
	} else {
		*dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
		*name = *dir ? malloc(strlen(slash) + 2) : NULL;
	}
	if (!*name) {
		free(*dir);
		*dir = NULL;
		return ENOMEM;
	}
	sprintf(*name, "./%s", slash ? slash + 1 : path);
	return 0;
}

enum nbd_open_fail e2t_nbd_conn_open_image(struct nbd_conn **out,
				       const char *path, const char *format,
				       int read_only, char *why, size_t len)
{
	char errpath[4096], *dir = NULL, *img = NULL;
	char *argv[16];
	struct stat st;
	enum nbd_open_fail rc;
	int n = 0;

	*out = NULL;
	/* an rbd: name is meant as qemu reads it (image_rbd.c) */
	if (e2t_rbd_is_spec(path)) {
		dir = strdup(".");
		img = strdup(path);
		if (!dir || !img) {
			free(dir);
			free(img);
			return NBD_OPEN_NO_MEMORY;
		}
	} else if (split_image_path(path, &dir, &img)) {
		return NBD_OPEN_NO_MEMORY;
	}
	if (make_err_file(errpath, sizeof(errpath), why, len)) {
		free(dir);
		free(img);
		return NBD_OPEN_TMPDIR;
	}
	argv[n++] = (char *)"/bin/sh";
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)"exec 2>\"$0\"; CDPATH= cd -- \"$1\" || exit; shift; "
		    "exec setsid \"$@\"";
	argv[n++] = errpath;
	argv[n++] = dir;
	argv[n++] = (char *)"qemu-nbd";
	argv[n++] = (char *)"-f";
	argv[n++] = (char *)format;
	argv[n++] = (char *)"--discard=unmap";
	argv[n++] = (char *)"--allocation-depth";
	if (read_only)
		argv[n++] = (char *)"--read-only";
	argv[n++] = img;
	argv[n] = NULL;

	rc = e2t_nbd_conn_open_argv(out, argv, why, len);
	if (rc == NBD_OPEN_FAILED && read_server_stderr(errpath, why, len))
		rc = NBD_OPEN_LOCKED;
	if (rc == NBD_OPEN_OK && !stat(errpath, &st)) {
		(*out)->err_dev = st.st_dev;
		(*out)->err_ino = st.st_ino;
	}
	unlink(errpath);
	free(dir);
	free(img);
	return rc;
}

/*
 * The server e2trim started, again with @read_only: the old one stops
 * first (qemu-nbd holds the image lock, a second could not start beside
 * it), then the new connection takes the old one's place, so that
 * everything holding @c (libext2fs's channel, readahead) goes on.
 */
enum nbd_open_fail e2t_nbd_conn_reopen_image(struct nbd_conn *c,
					 const char *path, const char *format,
					 int read_only, char *why, size_t len)
{
	struct nbd_conn *n;
	enum nbd_open_fail rc;

	/* what was asked ahead lands in its buffers first */
	while (nbd_aio_in_flight(c->h) > 0)
		if (nbd_poll(c->h, -1) == -1)
			break;
	if (nbd_aio_is_ready(c->h) == 1)
		nbd_shutdown(c->h, 0);
	/* waits for the server to exit: its lock is gone after */
	nbd_close(c->h);
	c->h = NULL;
	c->srv.can_trim = 0;
	rc = e2t_nbd_conn_open_image(&n, path, format, read_only, why, len);
	if (rc)
		return rc;
	c->h = n->h;
	n->h = NULL;
	c->srv = n->srv;
	c->err_dev = n->err_dev;
	c->err_ino = n->err_ino;
	e2t_nbd_conn_close(n);
	return NBD_OPEN_OK;
}

/* Reads of whole, aligned blocks of at most max_block bytes. */
static errcode_t pread_aligned(struct nbd_conn *c, unsigned char *p,
			       size_t len, uint64_t off)
{
	/* qemu-nbd takes 32 MiB at most in one request */
	size_t max = c->srv.max_block ? c->srv.max_block : (32U << 20), n;

	if (c->srv.min_block > 1)
		max -= max % c->srv.min_block;
	while (len) {
		n = len < max ? len : max;
		if (nbd_pread(c->h, p, n, off, 0) == -1)
			return nbd_get_errno() ? nbd_get_errno() : EIO;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * A server may say that it takes nothing smaller than min_block (nbdkit's
 * blocksize filter, a 4 KiB-sector device): the superblock's 1 KiB at
 * byte 1024 is then read as the whole block around it.
 */
errcode_t e2t_nbd_conn_pread(struct nbd_conn *c, void *buf, size_t len,
			 uint64_t off)
{
	uint64_t mb = c->srv.min_block, a, b;
	unsigned char *tmp;
	errcode_t rc;

	if (mb <= 1 || (off % mb == 0 && len % mb == 0))
		return pread_aligned(c, buf, len, off);
	a = off - off % mb;
	b = off + len;
	if (b % mb)
		b += mb - b % mb;
	if (b > c->srv.size_bytes)
		return EINVAL;	/* an export whose size is not in blocks */
	tmp = malloc(b - a);
	if (!tmp)
		return ENOMEM;
	rc = pread_aligned(c, tmp, b - a, a);
	if (!rc)
		memcpy(buf, tmp + (off - a), len);
	free(tmp);
	return rc;
}

errcode_t e2t_nbd_conn_flush(struct nbd_conn *c)
{
	if (nbd_can_flush(c->h) != 1)
		return 0;
	if (nbd_flush(c->h, 0) == -1)
		return nbd_get_errno() ? nbd_get_errno() : EIO;
	return 0;
}

void e2t_nbd_conn_close(struct nbd_conn *c)
{
	struct conn_box *box;

	if (!c)
		return;
	box = box_of(c);
	if (c->data_fd >= 0)
		close(c->data_fd);
	/*
	 * A child of the caller's fork() shares the connection with its
	 * parent: a goodbye would end the parent's, and nbd_close() kills
	 * the server libnbd started.  The child leaves the handle alone
	 * (its copy of the socket closes when it exits).
	 */
	if (c->h && c->owner_pid == getpid()) {
		/* a clean goodbye: qemu-nbd flushes, then exits */
		if (nbd_aio_is_ready(c->h) == 1)
			nbd_shutdown(c->h, 0);
		nbd_close(c->h);
	}
	box->magic = 0;
	free(box);
}

/* ---- libext2fs's io manager over the connection ---- */

struct io_priv {
	struct nbd_conn *conn;
	uint64_t offset_bytes;	/* "offset=N": where the filesystem starts */
	struct nbd_ra *ra;	/* reads asked ahead, or NULL */
};

static errcode_t io_open(const char *name, int flags, io_channel *channel)
{
	struct conn_box *box = NULL;
	struct io_priv *p = NULL;
	errcode_t err;

	(void)flags;
	if (!name || strncmp(name, CONN_PREFIX, strlen(CONN_PREFIX)) ||
	    sscanf(name + strlen(CONN_PREFIX), "%p", (void **)&box) != 1 ||
	    !box || box->magic != CONN_MAGIC)
		return EXT2_ET_BAD_DEVICE_NAME;
	err = ext2fs_get_memzero(sizeof(*p), &p);
	if (err)
		return err;
	p->conn = &box->c;
	p->ra = e2t_nbd_ra_new(p->conn);	/* without it, reads just wait */
	err = io_ro_channel_new(name, e2t_nbd_io_manager, p, channel);
	if (err) {
		e2t_nbd_ra_free(p->ra);
		ext2fs_free_mem(&p);
	}
	return err;
}

static errcode_t io_close(io_channel ch)
{
	struct io_priv *p = ch->private_data;

	if (--ch->refcount > 0)
		return 0;
	e2t_nbd_ra_free(p->ra);
	ext2fs_free_mem(&ch->private_data);
	io_ro_channel_free(ch);
	return 0;
}

/* [@off, @off + @len): asked ahead already, or read now. */
static errcode_t read_ahead(void *priv, void *buf, uint64_t len, uint64_t off)
{
	struct io_priv *p = priv;

	if (p->ra && e2t_nbd_ra_take(p->ra, buf, off, len))
		return 0;
	return e2t_nbd_conn_pread(p->conn, buf, len, off);
}

/* A negative @count means -count bytes (the superblock is read so). */
static errcode_t io_read_blk64(io_channel ch, unsigned long long blk,
			       int count, void *buf)
{
	struct io_priv *p = ch->private_data;
	struct io_ro_source src = { p->offset_bytes, p->conn->srv.size_bytes,
				    read_ahead, p };

	return io_ro_read_clipped(ch, blk, count, buf, &src);
}

/* What the fast readers will read next: ask for it now. */
static errcode_t io_readahead(io_channel ch, unsigned long long blk,
			      unsigned long long count)
{
	struct io_priv *p = ch->private_data;

	if (p->ra)
		e2t_nbd_ra_start(p->ra, p->offset_bytes + blk * ch->block_size,
			     count * ch->block_size);
	return 0;
}

static errcode_t io_set_option(io_channel ch, const char *option,
			       const char *arg)
{
	struct io_priv *p = ch->private_data;

	return io_ro_offset_option(option, arg, &p->offset_bytes);
}

static struct struct_io_manager nbd_io = {
	IO_RO_MANAGER("e2trim NBD I/O Manager"),
	.open = io_open,
	.close = io_close,
	.set_option = io_set_option,
	.read_blk64 = io_read_blk64,
	.cache_readahead = io_readahead,
};

io_manager e2t_nbd_io_manager = &nbd_io;
