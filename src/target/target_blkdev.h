/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_blkdev.h - a block device: BLKDISCARD and its kin, and a loop
 * device's backing file
 */
#ifndef E2TRIM_TARGET_BLKDEV_H
#define E2TRIM_TARGET_BLKDEV_H

#include <stdint.h>

#include "target_core.h"

/*
 * Prepare @t over @fd (already open, for writing unless dry run).
 * Returns 0, EOPNOTSUPP when the device cannot do @mode at all, or
 * another errno value.
 */
errcode_t target_blkdev_init(struct target *t, int fd, enum trim_mode mode);

/*
 * A loop device target (TRIM_ZERO_FILL): its backing file, open read-only,
 * which holds the device's bytes from *@offset on; -1 for any other.
 * The target owns it.
 */
int target_loop_backing(const struct target *t, uint64_t *offset);

#endif /* E2TRIM_TARGET_BLKDEV_H */
