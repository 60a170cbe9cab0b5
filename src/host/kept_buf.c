// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_buf.c - buffers the kernel may still write into, kept for good
 *
 * The list is one of the library's few pieces of state outside a handle:
 * a buffer a broken ring may still read into belongs to the process, not to the
 * filesystem that used it.  Two handles in two threads can push at once,
 * so the push is a compare-and-swap, not a plain store.
 */
#include <stdlib.h>

#include "kept_buf.h"

struct kept_buf {
	void *buf;
	struct kept_buf *next;
};

static struct kept_buf *kept_bufs;

void kept_buf_leave(void *buf)
{
	struct kept_buf *k = malloc(sizeof(*k));

	if (!k)
		return;		/* lost to leak checkers, still never reused */
	k->buf = buf;
	k->next = __atomic_load_n(&kept_bufs, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&kept_bufs, &k->next, k, 1,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}
