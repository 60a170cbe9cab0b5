/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_io.h - a filesystem inside a Ceph RBD image, read and trimmed
 *            through librbd in the process (rbd_io.c)
 *
 * No server stands between e2trim and the image: libext2fs reads through
 * e2t_rbd_io_manager, the discards go through target_rbd.c.  A real run
 * reads it read-only first; once every check passed it holds librbd's
 * exclusive lock, not handed over on request, from before the checks run
 * again to after the last discard.
 */
#ifndef E2TRIM_RBD_IO_H
#define E2TRIM_RBD_IO_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>

struct rbd_spec;
struct rbd_io;

/* Why e2t_rbd_io_open() or e2t_rbd_io_lock() failed, for the caller's code. */
enum rbd_io_fail {
	RBD_IO_OK = 0,
	RBD_IO_NO_MEMORY,
	RBD_IO_NO_LIBRBD,	/* librbd.so.1 / librados.so.2 cannot be loaded */
	RBD_IO_FAILED,		/* librados or librbd said no (words in why) */
	RBD_IO_NO_LOCK_FEATURE,	/* the image lacks exclusive-lock */
	RBD_IO_LOCK_HELD,	/* another client holds the lock and keeps it */
	RBD_IO_STOPPED,		/* a stop came while e2trim waited for it */
	RBD_IO_NO_WRITE,	/* the key may read the pool, not write it */
};

/*
 * Open the image @s names through its librbd connection: @read_only
 * (a dry run: nothing is written, no watch, no lock) or read-write.
 * On failure @why says which component said what.
 */
enum rbd_io_fail e2t_rbd_io_open(struct rbd_spec *s, int read_only,
			     struct rbd_io **out, char *why, size_t len);

/*
 * The image e2t_rbd_io_open() opened read-only, opened again read-write in
 * the same @io (its size still the one at the first open, for
 * e2t_rbd_io_recheck()); on failure words in @why.
 */
enum rbd_io_fail e2t_rbd_io_reopen(struct rbd_io *io, struct rbd_spec *s,
			       char *why, size_t len);

/* Take the exclusive lock (read-write only); on failure words in @why. */
enum rbd_io_fail e2t_rbd_io_lock(struct rbd_io *io, char *why, size_t len);

/*
 * Still ours, as it was: the size what it was at open, and once locked
 * the features and (once a batch: a round trip) the header's version as
 * the lock left them, and the lock held.  0, or ERANGE (the size
 * changed), ESTALE (a feature changed, `rbd feature disable` run through
 * e2trim's client, or the header was written), ENOLCK (the lock was
 * lost: broken by someone, or we were blocklisted) or an errno value.
 */
errcode_t e2t_rbd_io_recheck(struct rbd_io *io);

uint64_t e2t_rbd_io_size(const struct rbd_io *io);

/* "rbd-io:<address>": what ext2fs_open2() gives e2t_rbd_io_manager's open. */
const char *e2t_rbd_io_name(const struct rbd_io *io);

/* Read @len bytes at @off; 0 or an errno value. */
errcode_t e2t_rbd_io_pread(struct rbd_io *io, void *buf, size_t len, uint64_t off);

/*
 * Start a discard (@zero: write zeroes) of @len bytes at @off; *@comp
 * for e2t_rbd_io_wait(), which says how it went.  0 or an errno value.
 */
errcode_t e2t_rbd_io_discard_start(struct rbd_io *io, uint64_t off, uint64_t len,
			       int zero, void **comp);
errcode_t e2t_rbd_io_wait(void *comp);
int e2t_rbd_io_can_zero(void);
errcode_t e2t_rbd_io_flush(struct rbd_io *io);

/*
 * What e2trim's own waits for the lock (its request, its release) give
 * up at: a stop flag (the library's cancel), or NULL.
 */
void e2t_rbd_io_set_stop(struct rbd_io *io, const volatile sig_atomic_t *stop);

/*
 * The lock released now, and whatever librbd lost of it but left on the
 * header under e2trim's cookie (a stalled cluster): 0 when nothing of
 * ours is left; else an errno value (ETIMEDOUT: the cluster does not
 * answer), *@cookie and *@owner naming the lock left for `rbd lock rm`
 * (NULL when not known).
 */
errcode_t e2t_rbd_io_release(struct rbd_io *io, const char **cookie,
			 const char **owner);

/* The cluster did not answer one of e2trim's own waits: ask it nothing. */
int e2t_rbd_io_stuck(const struct rbd_io *io);

/* Release the lock, close the image.  NULL is fine. */
void e2t_rbd_io_close(struct rbd_io *io);

/*
 * libext2fs's view of the image: open it with e2t_rbd_io_name(), "offset=N"
 * as an io option for a partition.  Reads only: every write fails.
 */
extern io_manager e2t_rbd_io_manager;

#endif /* E2TRIM_RBD_IO_H */
