/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nbd_readahead.h - reads asked ahead through NBD (nbd_readahead.c)
 */
#ifndef E2TRIM_NBD_READAHEAD_H
#define E2TRIM_NBD_READAHEAD_H

#include <stdint.h>

struct nbd_conn;
struct nbd_ra;

/* A readahead cache over @c; NULL when out of memory (then none). */
struct nbd_ra *e2t_nbd_ra_new(struct nbd_conn *c);

/* Start reading [off, off + len) of the export, without waiting. */
void e2t_nbd_ra_start(struct nbd_ra *ra, uint64_t off, uint64_t len);

/*
 * Copy [off, off + len) into @buf if one readahead holds all of it
 * (waiting for it if needed): 1, or 0 when the caller must read itself.
 */
int e2t_nbd_ra_take(struct nbd_ra *ra, void *buf, uint64_t off, uint64_t len);

/* Wait for what is in flight and free; NULL is fine. */
void e2t_nbd_ra_free(struct nbd_ra *ra);

#endif /* E2TRIM_NBD_READAHEAD_H */
