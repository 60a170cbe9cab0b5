/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_zero.h - --zero-fill over a file or device
 */
#ifndef E2TRIM_TARGET_ZERO_H
#define E2TRIM_TARGET_ZERO_H

#include <stdint.h>

#include "target_core.h"

/*
 * TRIM_ZERO_FILL over t->fd: every byte of [start, start + len) zero
 * after, a sparse or thin target not grown.  An image file (or a loop
 * device's backing file) has its data punched out unread; the rest is
 * read in large chunks (up to 16 in flight through io_uring, which may
 * still be reading when it returns: target_finish() waits) and only the
 * parts that are not zero are zeroed (a hole punched in an image file,
 * WRITE ZEROES on a device, written zeros where the host cannot).  Dry
 * run: counts, writes nothing.  Returns 0, E2TRIM_ERR_INTERRUPTED when
 * asked to stop, or the errno value of a failed read or write (perhaps of
 * an earlier extent's piece).
 */
errcode_t target_zero_fill_fd(struct target *t, uint64_t start_bytes,
			      uint64_t len_bytes);

/*
 * Wait for the pieces target_zero_fill_fd() has in flight, then flush
 * what it wrote (target_finish does).  Returns t->error.
 */
errcode_t target_zero_fill_finish(struct target *t);

/* Close and free what target_zero_fill_fd() opened (target_close does). */
void target_zero_fill_free(struct target *t);

#endif /* E2TRIM_TARGET_ZERO_H */
