// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_ring.c - reaping an io_uring's completions
 *
 * The discard queue (target_uring.c) and --zero-fill's reads
 * (target_zero_read.c) reap the same way; what a completion means is
 * theirs.
 */
#include <errno.h>

#include "target_ring.h"

#ifdef HAVE_LIBURING
errcode_t ring_reap(struct io_uring *ring, int wait, ring_done_fn done,
		    void *priv)
{
	struct io_uring_cqe *cqe;
	uint64_t data;
	int rc, res;

	while (wait) {
		rc = io_uring_wait_cqe(ring, &cqe);
		if (rc == 0)
			break;
		if (rc != -EINTR)
			return (errcode_t)-rc;	/* conventions: liburing's -errno */
	}
	while (io_uring_peek_cqe(ring, &cqe) == 0) {
		data = cqe->user_data;
		res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		done(priv, data, res);
	}
	return 0;
}
#endif
