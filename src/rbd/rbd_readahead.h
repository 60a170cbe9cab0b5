/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_readahead.h - reads asked ahead through librbd (rbd_readahead.c)
 */
#ifndef E2TRIM_RBD_READAHEAD_H
#define E2TRIM_RBD_READAHEAD_H

#include <stdint.h>

struct rbd_dl;
struct rbd_ra;

/* A readahead cache over the image @d reads, @size bytes; NULL: none. */
struct rbd_ra *e2t_rbd_ra_new(struct rbd_dl *d, uint64_t size);

/* Start reading [off, off + len) of the image, without waiting. */
void e2t_rbd_ra_start(struct rbd_ra *ra, uint64_t off, uint64_t len);

/*
 * A read of [off, off + len) that follows the previous one: the next
 * stretch is asked ahead, in aligned chunks, those asked already left.
 */
void e2t_rbd_ra_sequential(struct rbd_ra *ra, uint64_t off, uint64_t len);

/*
 * Copy [off, off + len) into @buf if one readahead holds all of it
 * (waiting for it if needed): 1, or 0 when the caller must read itself.
 */
int e2t_rbd_ra_take(struct rbd_ra *ra, void *buf, uint64_t off, uint64_t len);

/*
 * Wait for every read in flight and forget what was read ahead: before
 * the image is opened again (nothing read before the lock is served
 * after it).  NULL is fine.
 */
void e2t_rbd_ra_drop_all(struct rbd_ra *ra);

/* e2t_rbd_ra_drop_all(), then free; NULL is fine. */
void e2t_rbd_ra_free(struct rbd_ra *ra);

#endif /* E2TRIM_RBD_READAHEAD_H */
