/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_ring.h - reaping an io_uring's completions, the one way
 */
#ifndef E2TRIM_TARGET_RING_H
#define E2TRIM_TARGET_RING_H

#ifdef HAVE_LIBURING
#include <stdint.h>
#include <et/com_err.h>
#include <liburing.h>

/* One completion: the request's user_data and its result. */
typedef void (*ring_done_fn)(void *priv, uint64_t user_data, int res);

/*
 * Every completion waiting on @ring, each marked seen and then given to
 * @done; with @wait, first wait for one (a signal does not end the wait).
 * Returns 0, or the errno value of a wait that failed: nothing is reaped
 * then, and the requests in flight cannot be accounted for (the caller's
 * ring is broken).  @done gets each result as liburing gives it: 0 or
 * -errno (a read: the bytes read).
 */
errcode_t ring_reap(struct io_uring *ring, int wait, ring_done_fn done,
		    void *priv);
#endif

#endif /* E2TRIM_TARGET_RING_H */
