/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_rbd.h - open a Ceph RBD image (rbd:POOL/IMAGE...) through qemu-nbd
 */
#ifndef E2TRIM_OPEN_RBD_H
#define E2TRIM_OPEN_RBD_H

#include "e2trim_int.h"

/* @t->path is an rbd: name: refuse an image in use, start qemu-nbd. */
errcode_t open_rbd(struct e2trim *t);

/*
 * Before the first discard: nobody but our own server has the image
 * open (@ours: how many watchers e2trim's server is, 0 or 1).
 */
errcode_t open_rbd_recheck(struct e2trim *t, int ours);

/* What the image holds in the cluster now (rbd du --exact), 0: unknown. */
uint64_t open_rbd_allocated(const struct e2trim *t);

/* The name qemu-nbd opens the image by (with librados's time-outs). */
const char *open_rbd_qemu_name(const struct e2trim *t);

void open_rbd_close(struct e2trim *t);

#endif /* E2TRIM_OPEN_RBD_H */
