/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_dl_lock.h - librbd's exclusive lock on the image e2trim trims
 *                 (rbd_dl_lock.c): taken and released under e2trim's own
 *                 bounded waits, and what the lock rests on
 */
#ifndef E2TRIM_RBD_DL_LOCK_H
#define E2TRIM_RBD_DL_LOCK_H

#include <signal.h>
#include <stdint.h>
#include <et/com_err.h>

struct rbd_dl;

/*
 * librbd's exclusive lock taken in the mode that is not handed over on
 * request (RBD_LOCK_MODE_EXCLUSIVE): any other client's write fails or
 * waits until it is released.  EOPNOTSUPP: the image lacks the
 * exclusive-lock feature; else 0 or librbd's errno value.
 */
errcode_t e2t_rbd_dl_io_lock(struct rbd_dl *d);

/*
 * The version of the image's header object (rados_stat): any client
 * that writes the image takes its exclusive lock there first, so a
 * writer that came and went changed it.  0 or an errno value.
 */
errcode_t e2t_rbd_dl_io_header_version(struct rbd_dl *d, uint64_t *ver);

/*
 * The image's features now (librbd's state, refreshed when the header
 * changed): 0 or librbd's errno value.
 */
errcode_t e2t_rbd_dl_features(struct rbd_dl *d, uint64_t *features);

/*
 * What e2trim's own waits (the lock taken and released, in a thread of
 * their own: rbd_dl_lock.c) give up at: a stop flag, or NULL.
 */
void e2t_rbd_dl_set_stop(struct rbd_dl *d, const volatile sig_atomic_t *stop);

/*
 * The lock released, and our cookie removed from the header if librbd
 * had lost the lock (its watch failed) but it is still listed: 0 when
 * nothing of ours is left; ETIMEDOUT (or librbd's errno value) when the
 * cluster did not answer: e2t_rbd_dl_own_lock() then names what is left.
 */
errcode_t e2t_rbd_dl_release(struct rbd_dl *d);

/* A call of e2trim's own waits never came back: ask nothing more. */
int e2t_rbd_dl_stuck(const struct rbd_dl *d);

/*
 * The lock e2t_rbd_dl_io_lock() took, as `rbd lock ls` lists it: its id
 * ("auto N") and owner ("client.N"): 1, or 0 when it is not known.
 */
int e2t_rbd_dl_own_lock(const struct rbd_dl *d, const char **cookie,
		       const char **owner);

/* Is the lock e2t_rbd_dl_io_lock() took still ours?  1 or 0. */
int e2t_rbd_dl_io_owns_lock(struct rbd_dl *d);

#endif /* E2TRIM_RBD_DL_LOCK_H */
