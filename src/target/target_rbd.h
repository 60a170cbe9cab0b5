/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_rbd.h - discards through librbd in the process (a Ceph RBD image)
 */
#ifndef E2TRIM_TARGET_RBD_H
#define E2TRIM_TARGET_RBD_H

#include <stddef.h>
#include <stdint.h>

#include "target_core.h"

/*
 * Prepare @t over the RBD image @io (rbd_io.h), trimming inward to
 * @granularity (librbd's rbd_discard_granularity_bytes); @map (@n
 * extents [start, end) in image bytes, sorted and apart) is where the
 * image holds data, or NULL when unknown.  EOPNOTSUPP for TRIM_SECURE
 * and TRIM_ZERO_FILL, and TRIM_ZEROOUT where librbd cannot.
 */
struct rbd_io;
errcode_t target_rbd_init(struct target *t, struct rbd_io *io,
			  uint64_t granularity, const uint64_t (*map)[2],
			  size_t n, enum trim_mode mode);

#endif /* E2TRIM_TARGET_RBD_H */
