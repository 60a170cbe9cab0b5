/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_rbd.h - open a Ceph RBD image (rbd:POOL/IMAGE...) through librbd
 */
#ifndef E2TRIM_OPEN_RBD_H
#define E2TRIM_OPEN_RBD_H

#include "e2trim_int.h"

/*
 * @t->path is an rbd: name: refuse an image in use, open it through
 * librbd into @t->rbd_io, read-only (a real run too, until
 * open_rbd_writable()).
 */
errcode_t open_rbd(struct e2trim *t);

/*
 * A real run whose checks all passed: no client wrote the image since
 * it was opened (its header object's version), then the image reopened
 * read-write, its exclusive lock taken and kept until open_rbd_close(),
 * nobody else with it open, and its superblock and descriptors as the
 * checks read them (else 26).  0 for no RBD image or a snapshot.
 */
errcode_t open_rbd_writable(struct e2trim *t);

/*
 * Before the first discard: the lock still ours, the size as at open,
 * and nobody but e2trim has the image open.  0 for no RBD image.
 */
errcode_t open_rbd_recheck(struct e2trim *t);

/*
 * The image's features or header changed under the lock (ESTALE from
 * e2t_rbd_io_recheck()): `rbd feature disable` and the like, asked by any
 * client, are carried out by the lock's owner, e2trim's own librbd.
 * Without exclusive-lock any client writes without a lock: a refusal
 * (26) with the rest of the free space untouched.
 */
#define OPEN_RBD_CHANGED "the RBD image's features or header changed " \
	"while e2trim held its exclusive lock (rbd feature disable and the " \
	"like run through the lock's owner, e2trim itself; without " \
	"exclusive-lock any client writes without a lock)"
#define OPEN_RBD_CHANGED_FIX "run again once the image has its " \
	"exclusive-lock feature (rbd feature enable POOL/IMAGE " \
	"exclusive-lock) and nobody changes it meanwhile"

/* What the image holds in the cluster now (rbd du --exact): 1, 0 unknown. */
int open_rbd_allocated(const struct e2trim *t, uint64_t *bytes);

/* Where the image holds data (rbd diff): 1, or 0 when there is no map. */
int open_rbd_data_map(const struct e2trim *t, const uint64_t (**map)[2],
		      size_t *n);

/*
 * A run that stopped early on an RBD image: its lock released now, and
 * what librbd lost of it but left on the image under e2trim's cookie
 * (a stalled cluster); when the cluster does not answer, a warning
 * with the exact `rbd lock rm` for e2trim's own lock.
 */
void open_rbd_release(struct e2trim *t);

/* The lock released, the image closed, whatever stopped the run. */
void open_rbd_close(struct e2trim *t);

#endif /* E2TRIM_OPEN_RBD_H */
