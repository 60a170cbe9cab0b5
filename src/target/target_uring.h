/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_uring.h - a block device's discards through io_uring
 */
#ifndef E2TRIM_TARGET_URING_H
#define E2TRIM_TARGET_URING_H

#include "target_core.h"

/*
 * Switch a block device target to io_uring discards, with @sync_ops as
 * the fallback.  EOPNOTSUPP when not built in or not possible.
 */
errcode_t target_uring_init(struct target *t,
			    const struct target_ops *sync_ops);

#endif /* E2TRIM_TARGET_URING_H */
