// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target.c - the part of trimming every back end shares
 *
 * A device (or a host filesystem) frees space only in whole units of its
 * discard granularity; a thin pool ignores a smaller or misaligned discard
 * altogether.  So every extent is first trimmed inward to granularity
 * boundaries, then split so that no request is larger than the device
 * accepts in one go, and issued in ascending order.
 */
#include <errno.h>
#include <string.h>

#include "target.h"

/*
 * Round [*start, *end) inward to boundaries at align_offset + k * gran.
 * Returns 0 when nothing whole is left.
 */
static int align_inward(const struct target_limits *lim, uint64_t *start,
			uint64_t *end);

int target_align(const struct target *t, uint64_t *start_bytes,
		 uint64_t *end_bytes)
{
	return align_inward(&t->lim, start_bytes, end_bytes);
}

static int align_inward(const struct target_limits *lim, uint64_t *start,
			uint64_t *end)
{
	uint64_t g = lim->granularity, off = lim->align_offset % g;
	uint64_t s = *start, e = *end, r;

	if (g <= 1)
		return s < e;
	r = (s + g - off) % g;	/* (s - off) mod g, without underflow */
	if (r)
		s += g - r;
	r = (e + g - off) % g;
	if (r > e)
		return 0;	/* ends before the first boundary */
	e -= r;
	if (s >= e || s < *start)
		return 0;
	*start = s;
	*end = e;
	return 1;
}

static errcode_t issue_one(struct target *t, uint64_t start, uint64_t len)
{
	/* zero-fill reads even on a dry run, to count what it would write */
	if (t->mode == TRIM_ZERO_FILL)
		return target_zero_fill_fd(t, start, len);
	if (t->dryrun) {
		target_complete(t, start, len, 0);
		return 0;
	}
	if (t->ops->submit)
		return t->ops->submit(t, start, len);
	target_complete(t, start, len, t->ops->request(t, start, len));
	return t->error;
}

/* Issue [start, end) in requests of at most max_bytes. */
static errcode_t issue(struct target *t, uint64_t start, uint64_t end)
{
	uint64_t max = t->lim.max_bytes, len;
	errcode_t rc;

	/*
	 * Keep split points on the granularity too.  No aligned request can
	 * meet a maximum below it: then one granularity at a time, rather
	 * than (max rounded down to 0) no limit at all.
	 */
	if (max && t->lim.granularity > 1) {
		max -= max % t->lim.granularity;
		if (!max)
			max = t->lim.granularity;
	}
	while (start < end) {
		if (target_stopped(t))
			return E2TRIM_ERR_INTERRUPTED;
		len = end - start;
		if (max && len > max)
			len = max;
		rc = issue_one(t, start, len);
		target_progress(t);
		if (rc)
			return rc;
		start += len;
	}
	return 0;
}

/* Trim [start, end), which is already aligned, leaving holes alone. */
static errcode_t trim_data(struct target *t, uint64_t start, uint64_t end)
{
	uint64_t ds, de, a, b;
	errcode_t rc;

	if (!t->ops->next_data)
		return issue(t, start, end);
	while (start < end) {
		rc = t->ops->next_data(t, start, end, &ds, &de);
		if (rc)
			return rc;
		t->stats.sparse_bytes += ds - start;
		if (ds >= end)
			return 0;	/* a hole to the end */
		start = de;
		/*
		 * Holes and data come in whole host blocks, so this is still
		 * aligned; where it is not, the report still adds up.
		 */
		a = ds;
		b = de;
		if (!align_inward(&t->lim, &a, &b)) {
			t->stats.align_bytes += de - ds;
			continue;
		}
		t->stats.align_bytes += (de - ds) - (b - a);
		rc = issue(t, a, b);
		if (rc)
			return rc;
	}
	return 0;
}

errcode_t target_trim(struct target *t, uint64_t start_bytes,
		      uint64_t len_bytes)
{
	uint64_t start = start_bytes, end = start_bytes + len_bytes;

	if (target_stopped(t))
		return E2TRIM_ERR_INTERRUPTED;
	if (!align_inward(&t->lim, &start, &end)) {
		t->stats.align_extents++;
		t->stats.align_bytes += len_bytes;
		return 0;
	}
	t->stats.align_bytes += len_bytes - (end - start);
	return trim_data(t, start, end);
}

errcode_t target_finish(struct target *t)
{
	/* zero-fill has pieces in flight even on a dry run */
	if (t->mode == TRIM_ZERO_FILL && t->ops)
		return target_zero_fill_finish(t);
	if (!t->dryrun && t->ops && t->ops->finish)
		return t->ops->finish(t);
	return t->error;
}

void target_close(struct target *t)
{
	target_zero_fill_free(t);
	if (t->ops && t->ops->close)
		t->ops->close(t);
	t->priv = NULL;
}
