// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_core.c - what the back ends report back: completions, progress
 */
#include <errno.h>
#include <stdint.h>

#include "target_core.h"

void target_complete(struct target *t, uint64_t start_bytes,
		     uint64_t len_bytes, errcode_t res)
{
	if (res == 0) {
		t->stats.requests++;
		t->stats.bytes += len_bytes;
	} else if (!t->error) {
		t->error = res;
		t->error_start = start_bytes;
	}
}

void target_unconfirmed(struct target *t, uint64_t start_bytes,
			uint64_t len_bytes, errcode_t res)
{
	struct target_stats *s = &t->stats;

	if (!s->unconfirmed || start_bytes < s->unconfirmed_start)
		s->unconfirmed_start = start_bytes;
	s->unconfirmed++;
	s->unconfirmed_bytes += len_bytes;
	target_complete(t, start_bytes, len_bytes, res ? res : EIO);
}

void target_progress(struct target *t)
{
	const struct target_stats *s = &t->stats;

	if (t->progress)
		t->progress(t->progress_priv, s->bytes + s->sparse_bytes +
			    s->align_bytes);
}
