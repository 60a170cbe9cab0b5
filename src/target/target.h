/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target.h - what receives the discards, as the apply stage sees it
 *
 * The top of the target family.  The four back ends (a block device, its
 * io_uring queue, an image file, an NBD connection; target_core.h says
 * what each one fills in) each have a header of their own; three are
 * included here for their init calls (target_blkdev.c sets up io_uring
 * itself), and --zero-fill's driver is target_zero.h.
 * target_trim() does what they share: trimming inward to the
 * granularity, splitting, skipping holes, stopping on a signal.
 */
#ifndef E2TRIM_TARGET_H
#define E2TRIM_TARGET_H

#include <stdint.h>

#include "target_blkdev.h"
#include "target_core.h"
#include "target_file.h"
#include "target_nbd.h"
#include "target_rbd.h"
#include "target_zero.h"

/*
 * Trim one extent of the plan: inward to the granularity, split at
 * max_bytes, skipping holes.  Returns 0, E2TRIM_ERR_INTERRUPTED when
 * asked to stop, or the errno value of a failed request (t->error,
 * t->error_start tell which).
 * With an asynchronous back end a failure may only show in a later call
 * or in target_finish().
 */
errcode_t target_trim(struct target *t, uint64_t start_bytes,
		      uint64_t len_bytes);

/*
 * What target_trim() makes of an extent: [*start_bytes, *end_bytes)
 * trimmed inward to the granularity.  Returns 0 when nothing is left.
 */
int target_align(const struct target *t, uint64_t *start_bytes,
		 uint64_t *end_bytes);

/* Wait for every request in flight; returns t->error (0 if none failed). */
errcode_t target_finish(struct target *t);

void target_close(struct target *t);

#endif /* E2TRIM_TARGET_H */
