/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_nbd.h - open a VM image or an NBD URI (open_nbd.c)
 */
#ifndef E2TRIM_OPEN_NBD_H
#define E2TRIM_OPEN_NBD_H

#include "e2trim_int.h"

/* @t->path is an NBD URI: connect, refuse a server that cannot trim. */
errcode_t open_nbd_uri(struct e2trim *t);

/*
 * @t->fd is open on an image file: if it is a VM image (by its magic,
 * or opts.format), start qemu-nbd on it and read through that from now.
 */
errcode_t open_image_format(struct e2trim *t);

/*
 * A VM image's (or an RBD image's) disk as a file descriptor for libblkid, which reads the
 * rarer partition tables: a sparse memfd of the disk's size holding its
 * first and last MiBs, into *@out.  0 or an errno value.
 */
errcode_t open_nbd_shadow(struct e2trim *t, int *out);

/*
 * The same of the @size bytes at byte @start of the disk (a partition's),
 * as a memfd of @size bytes: what libblkid reads of the signatures in a
 * filesystem's range.  0 or an errno value.
 */
errcode_t open_nbd_shadow_range(struct e2trim *t, uint64_t start,
				uint64_t size, int *out);

/*
 * A VM image whose every discard qemu drops (a qcow2 v2 overlay): nothing
 * in it can be freed.  0 for anything else.
 */
int open_nbd_frees_nothing(const struct e2trim *t);

/*
 * What the VM image occupies on its host: its file's blocks, and a
 * qcow2's external data file's, where its clusters live.
 */
uint64_t open_nbd_allocated(const struct e2trim *t);

/*
 * A VM image is opened read-only: start its server again read-write
 * once every gate and the verification have passed (e2trim_apply(), not
 * in a dry run), and refuse if its superblock changed between.  An RBD
 * image, open and locked since the start: open_rbd_recheck().
 */
errcode_t open_nbd_writable(struct e2trim *t);

void open_nbd_close(struct e2trim *t);

#endif /* E2TRIM_OPEN_NBD_H */
