// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbd_io.c - a Ceph RBD image read and trimmed through librbd in the
 *            process, and libext2fs reading through it
 *
 * librbd's exclusive lock is cooperative by default: a client that
 * wants to write asks the owner, and the owner hands it over.  So a VM
 * starting beside a trim would get it, write new files, and lose them to
 * the next discard of a plan made before they existed.  rbd_lock_acquire
 * in RBD_LOCK_MODE_EXCLUSIVE keeps it instead: while e2trim holds it,
 * any other client's write (a VM, qemu-io, rbd import, a resize) fails
 * or waits until e2trim has closed the image.  It is taken before the
 * first read of a real run and released at close, on every path; if the
 * process dies hard, the lock dies with its watch and the next client
 * that asks breaks it.
 *
 * Every run opens the image read-only first (rbd_open_read_only): no
 * watch, no lock, no object map opened for writing, nothing of the
 * image's objects changed, so that a refusal changes nothing.  A real
 * run that passed every check reopens it read-write (e2t_rbd_io_reopen())
 * and takes the lock before the checks run again and the first discard.
 *
 * libext2fs's reads go through a readahead cache (rbd_readahead.c): what
 * the fast readers say comes next, and the next stretch of a sequential
 * read, in flight at once.  It is emptied before the reopen, so the
 * checks under the lock read the image afresh.
 *
 * As nbd_io.c does for a connection, the io manager is opened by name
 * ("rbd-io:0x...") and the handle carries a magic number: nothing global.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_readonly.h"
#include "image_rbd.h"
#include "rbd_dl.h"
#include "rbd_io.h"
#include "rbd_readahead.h"

#define IO_PREFIX "rbd-io:"
#define IO_MAGIC 0x72626469u		/* "rbdi" */

/* librbd takes any length; bounded so that one read is not all memory */
#define READ_MAX (32U << 20)

/* the header's version asked once in this many rechecks (a batch) */
#define RBD_IO_HEADER_EVERY 64

struct rbd_io {
	unsigned int magic;
	struct rbd_dl *d;	/* the spec's connection: not ours to close */
	uint64_t size_bytes;	/* at open: e2t_rbd_io_recheck() compares */
	uint64_t header_ver;	/* at open: e2t_rbd_io_reopen() compares; */
				/* once locked, as the lock left it */
	uint64_t features;	/* once locked: what the lock rests on */
	unsigned int looks;	/* e2t_rbd_io_recheck()s since the header's */
	struct rbd_ra *ra;	/* reads asked ahead, or NULL */
	uint64_t last_end;	/* where the last read ended: sequential? */
	char name[40];
	unsigned int read_only : 1,
		     locked : 1;
};

/* "<component>: <what>: <strerror>" into @why */
static enum rbd_io_fail io_fail(errcode_t err, char *why, size_t len,
				const char *what, const char *name)
{
	snprintf(why, len, "librbd: %s %s: %s", what, name,
		 strerror((int)err));
	return RBD_IO_FAILED;
}

enum rbd_io_fail e2t_rbd_io_open(struct rbd_spec *s, int read_only,
			     struct rbd_io **out, char *why, size_t len)
{
	struct rbd_io *io;
	struct rbd_dl *d;
	errcode_t err;

	*out = NULL;
	err = e2t_rbd_spec_connect(s, &d, why, len);
	if (err == ELIBACC)
		return RBD_IO_NO_LIBRBD;
	if (err == ENOMEM)
		return RBD_IO_NO_MEMORY;
	if (err)
		return RBD_IO_FAILED;	/* "librados: ..." in @why */
	io = calloc(1, sizeof(*io));
	if (!io)
		return RBD_IO_NO_MEMORY;
	err = e2t_rbd_dl_io_open(d, e2t_rbd_spec_name(s), read_only);
	if (!err)
		err = e2t_rbd_dl_io_size(d, &io->size_bytes);
	/* before the first read: what a writer until the lock changes */
	if (!err && !e2t_rbd_spec_is_snap(s))
		err = e2t_rbd_dl_io_header_version(d, &io->header_ver);
	if (err) {
		e2t_rbd_dl_io_close(d);
		free(io);
		return io_fail(err, why, len, "cannot open", e2t_rbd_spec_name(s));
	}
	io->magic = IO_MAGIC;
	io->d = d;
	io->ra = e2t_rbd_ra_new(d, io->size_bytes);	/* without it, reads wait */
	io->read_only = !!read_only;
	snprintf(io->name, sizeof(io->name), IO_PREFIX "%p", (void *)io);
	*out = io;
	return RBD_IO_OK;
}

enum rbd_io_fail e2t_rbd_io_lock(struct rbd_io *io, char *why, size_t len)
{
	errcode_t err = e2t_rbd_dl_io_lock(io->d);

	if (err == EOPNOTSUPP)
		return RBD_IO_NO_LOCK_FEATURE;
	if (err == EINTR)
		return RBD_IO_STOPPED;
	if (err == EPERM || err == EACCES) {
		snprintf(why, len, "librbd: cannot take the image's exclusive "
			 "lock: %s", strerror((int)err));
		return RBD_IO_NO_WRITE;
	}
	/* the owner keeps it (another e2trim, a client in the same mode) */
	if (err == EROFS || err == EBUSY) {
		snprintf(why, len, "librbd: another client holds the image's "
			 "exclusive lock and keeps it (%s)", strerror((int)err));
		return RBD_IO_LOCK_HELD;
	}
	if (err) {
		snprintf(why, len, "librbd: cannot take the image's exclusive "
			 "lock: %s", strerror((int)err));
		return RBD_IO_FAILED;
	}
	io->locked = 1;
	/*
	 * What the lock rests on, as it stands now: the features (another
	 * client's `rbd feature disable` runs through e2trim's librbd, the
	 * owner) and the header's version (every change of the image's
	 * metadata writes it; e2trim's own discards never do)
	 */
	err = e2t_rbd_dl_features(io->d, &io->features);
	if (!err)
		err = e2t_rbd_dl_io_header_version(io->d, &io->header_ver);
	if (err) {
		snprintf(why, len, "librbd: cannot read the locked image's "
			 "header: %s", strerror((int)err));
		return RBD_IO_FAILED;
	}
	io->looks = 0;
	return RBD_IO_OK;
}

enum rbd_io_fail e2t_rbd_io_reopen(struct rbd_io *io, struct rbd_spec *s,
			       char *why, size_t len)
{
	errcode_t err;
	uint64_t ver;

	if (!io->read_only)
		return RBD_IO_OK;
	/* nothing read before the lock is served after it */
	e2t_rbd_ra_drop_all(io->ra);
	io->last_end = 0;
	/*
	 * Any client that wrote the image since e2t_rbd_io_open() took its lock
	 * in the header object first, and changed its version: what was
	 * read may be stale (a write into a block then free, say).
	 */
	err = e2t_rbd_dl_io_header_version(io->d, &ver);
	if (err)
		return io_fail(err, why, len, "cannot stat the header of",
			       e2t_rbd_spec_name(s));
	if (ver != io->header_ver) {
		snprintf(why, len, "another client opened the RBD image for "
			 "writing while e2trim checked it (its header object "
			 "changed); nothing was trimmed: run again once no "
			 "other client has the image open");
		return RBD_IO_LOCK_HELD;
	}
	/* the same handle: libext2fs's channel keeps reading through it */
	err = e2t_rbd_dl_io_open(io->d, e2t_rbd_spec_name(s), 0);
	/* a cephx key with read caps only: the read-only open went through */
	if (err == EPERM || err == EACCES) {
		io_fail(err, why, len, "cannot open for writing",
			e2t_rbd_spec_name(s));
		return RBD_IO_NO_WRITE;
	}
	if (err)
		return io_fail(err, why, len, "cannot open for writing",
			       e2t_rbd_spec_name(s));
	io->read_only = 0;
	return RBD_IO_OK;
}

/* Features and header as the lock left them: 0, ESTALE or an errno. */
static errcode_t recheck_header(struct rbd_io *io)
{
	uint64_t features, ver;
	errcode_t err = e2t_rbd_dl_features(io->d, &features);

	if (err)
		return err;
	if (features != io->features)
		return ESTALE;
	/* a round trip: once a batch of requests in flight, not each */
	if (io->looks++ % RBD_IO_HEADER_EVERY)
		return 0;
	err = e2t_rbd_dl_io_header_version(io->d, &ver);
	if (err)
		return err;
	return ver == io->header_ver ? 0 : ESTALE;
}

errcode_t e2t_rbd_io_recheck(struct rbd_io *io)
{
	uint64_t size;
	errcode_t err;

	err = e2t_rbd_dl_io_size(io->d, &size);
	if (err)
		return err;
	if (size != io->size_bytes)
		return ERANGE;
	/*
	 * the features first: with exclusive-lock switched off librbd
	 * drops the lock too, and the cause is the feature, not a stall
	 */
	err = io->locked ? recheck_header(io) : 0;
	if (err)
		return err;
	if (io->locked && !e2t_rbd_dl_io_owns_lock(io->d))
		return ENOLCK;
	return 0;
}

uint64_t e2t_rbd_io_size(const struct rbd_io *io)
{
	return io->size_bytes;
}

const char *e2t_rbd_io_name(const struct rbd_io *io)
{
	return io->name;
}

errcode_t e2t_rbd_io_pread(struct rbd_io *io, void *buf, size_t len, uint64_t off)
{
	size_t n;
	errcode_t err;

	while (len) {
		n = len < READ_MAX ? len : READ_MAX;
		err = e2t_rbd_dl_io_read(io->d, buf, n, off);
		if (err)
			return err;
		buf = (char *)buf + n;
		off += n;
		len -= n;
	}
	return 0;
}

errcode_t e2t_rbd_io_discard_start(struct rbd_io *io, uint64_t off, uint64_t len,
			       int zero, void **comp)
{
	return e2t_rbd_dl_io_discard(io->d, off, len, zero, comp);
}

errcode_t e2t_rbd_io_wait(void *comp)
{
	return e2t_rbd_dl_io_wait(comp);
}

int e2t_rbd_io_can_zero(void)
{
	return e2t_rbd_dl_io_can_zero();
}

errcode_t e2t_rbd_io_flush(struct rbd_io *io)
{
	return io->read_only ? 0 : e2t_rbd_dl_io_flush(io->d);
}

int e2t_rbd_io_stuck(const struct rbd_io *io)
{
	return e2t_rbd_dl_stuck(io->d);
}

void e2t_rbd_io_set_stop(struct rbd_io *io, const volatile sig_atomic_t *stop)
{
	e2t_rbd_dl_set_stop(io->d, stop);
}

errcode_t e2t_rbd_io_release(struct rbd_io *io, const char **cookie,
			 const char **owner)
{
	errcode_t err = e2t_rbd_dl_release(io->d);

	if (err && !e2t_rbd_dl_own_lock(io->d, cookie, owner))
		*cookie = *owner = NULL;
	io->locked = 0;
	return err;
}

void e2t_rbd_io_close(struct rbd_io *io)
{
	if (!io)
		return;
	/* librbd must not write into a buffer after it is freed */
	e2t_rbd_ra_free(io->ra);
	e2t_rbd_dl_io_close(io->d);
	io->magic = 0;
	free(io);
}

/* ---- libext2fs's io manager over the image ---- */

struct io_priv {
	struct rbd_io *io;
	uint64_t offset_bytes;	/* "offset=N": where the filesystem starts */
};

static errcode_t io_open(const char *name, int flags, io_channel *channel)
{
	struct rbd_io *io = NULL;
	struct io_priv *p = NULL;
	errcode_t err;

	(void)flags;
	if (!name || strncmp(name, IO_PREFIX, strlen(IO_PREFIX)) ||
	    sscanf(name + strlen(IO_PREFIX), "%p", (void **)&io) != 1 ||
	    !io || io->magic != IO_MAGIC)
		return EXT2_ET_BAD_DEVICE_NAME;
	err = ext2fs_get_memzero(sizeof(*p), &p);
	if (err)
		return err;
	p->io = io;
	err = io_ro_channel_new(name, e2t_rbd_io_manager, p, channel);
	if (err)
		ext2fs_free_mem(&p);
	return err;
}

static errcode_t io_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	ext2fs_free_mem(&ch->private_data);
	io_ro_channel_free(ch);
	return 0;
}

/*
 * From what was read ahead, or from librbd; a read where the last one
 * ended asks the next stretch ahead first.
 */
static errcode_t read_ahead(void *priv, void *buf, uint64_t len, uint64_t off)
{
	struct rbd_io *io = priv;
	int seq = off == io->last_end;

	io->last_end = off + len;
	if (seq)
		e2t_rbd_ra_sequential(io->ra, off, len);
	if (e2t_rbd_ra_take(io->ra, buf, off, len))
		return 0;
	return e2t_rbd_io_pread(io, buf, len, off);
}

/* A negative @count means -count bytes (the superblock is read so). */
static errcode_t io_read_blk64(io_channel ch, unsigned long long blk,
			       int count, void *buf)
{
	struct io_priv *p = ch->private_data;
	struct io_ro_source src = { p->offset_bytes, p->io->size_bytes,
				    read_ahead, p->io };

	return io_ro_read_clipped(ch, blk, count, buf, &src);
}

/* What the fast readers will read next: ask for it now. */
static errcode_t io_readahead(io_channel ch, unsigned long long blk,
			      unsigned long long count)
{
	struct io_priv *p = ch->private_data;

	e2t_rbd_ra_start(p->io->ra, p->offset_bytes + blk * ch->block_size,
		     count * ch->block_size);
	return 0;
}

static errcode_t io_set_option(io_channel ch, const char *option,
			       const char *arg)
{
	struct io_priv *p = ch->private_data;

	return io_ro_offset_option(option, arg, &p->offset_bytes);
}

static struct struct_io_manager rbd_io_struct = {
	IO_RO_MANAGER("e2trim RBD I/O Manager"),
	.open = io_open,
	.close = io_close,
	.set_option = io_set_option,
	.read_blk64 = io_read_blk64,
	.cache_readahead = io_readahead,
};

io_manager e2t_rbd_io_manager = &rbd_io_struct;
