// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * plan.c - from free runs of blocks to the byte extents that get trimmed
 */
#include <errno.h>
#include <string.h>

#include "plan.h"
#include "walk.h"

errcode_t plan_check_range(const struct plan_geometry *geo,
			   const struct plan_range *range,
			   struct plan_blocks *out)
{
	uint64_t bs = geo->block_size, fs_bytes, end_bytes;

	if (bs == 0 || geo->blocks_count == 0 ||
	    __builtin_mul_overflow(geo->blocks_count, bs, &fs_bytes))
		return EINVAL;
	if (range->start_bytes >= fs_bytes || range->len_bytes < bs)
		return EINVAL;

	/* start + len may wrap for a "to the end" length: saturate */
	if (__builtin_add_overflow(range->start_bytes, range->len_bytes,
				   &end_bytes) || end_bytes > fs_bytes)
		end_bytes = fs_bytes;

	/* Only blocks wholly inside the range: round the start up. */
	out->first = range->start_bytes / bs + (range->start_bytes % bs != 0);
	out->end = end_bytes / bs;

	/*
	 * Blocks below s_first_data_block are not in the bitmap at all: on a
	 * 1 KiB-block filesystem block 0 holds the boot sector, and the
	 * superblock starts in block 1.
	 */
	if (out->first < geo->first_data_block)
		out->first = geo->first_data_block;
	if (out->first > out->end)
		out->first = out->end;
	return 0;
}

struct plan_walk {
	const struct plan_geometry *geo;
	uint64_t minlen_bytes;
	plan_emit_fn emit;
	void *priv;
	struct plan_stats *stats;
};

/* Hand one merged, clipped extent [start, end) of blocks on, or skip it. */
static int flush_extent(struct plan_walk *w, uint64_t start, uint64_t end)
{
	uint64_t start_bytes = start * w->geo->block_size;
	uint64_t len_bytes = (end - start) * w->geo->block_size;

	plan_hist_add(&w->stats->hist, len_bytes);
	if (len_bytes < w->minlen_bytes) {
		w->stats->skipped_extents++;
		w->stats->skipped_bytes += len_bytes;
		return 0;
	}
	w->stats->extents++;
	w->stats->bytes += len_bytes;
	return w->emit(w->priv, start_bytes, len_bytes);
}

void plan_hist_add(struct e2trim_histogram *h, uint64_t len_bytes)
{
	unsigned int i = 0;

	/* shorter than a cluster (a range's edge) counts as one */
	while (i + 1 < E2TRIM_HISTOGRAM_BUCKETS &&
	       len_bytes >> (i + 1) >= h->unit_bytes)
		i++;
	h->bucket[i].extents++;
	h->bucket[i].bytes += len_bytes;
	h->extents++;
	h->bytes += len_bytes;
	if (h->nbuckets < i + 1)
		h->nbuckets = i + 1;
}

/* next_free() once, clipped to start at @from; EFAULT if it does not move */
static errcode_t next_run(const struct plan_source *src, uint64_t from,
			  uint64_t last, uint64_t *run_start, uint64_t *run_end)
{
	errcode_t err = src->next_free(src->priv, from, last, run_start,
				       run_end);

	if (err)
		return err;
	/* A bigalloc run starts on a cluster edge, maybe before @from. */
	if (*run_start < from)
		*run_start = from;
	if (!run_advances(from, *run_start, *run_end))
		return EFAULT;	/* a bug or a damaged source: never looped on */
	return 0;
}

errcode_t plan_each_run(const struct plan_source *src, uint64_t from,
			uint64_t end, plan_run_fn fn, void *priv)
{
	uint64_t start, stop;
	errcode_t err;

	while (from < end) {
		err = next_run(src, from, end - 1, &start, &stop);
		if (err == ENOENT)
			return 0;
		if (err)
			return err;
		if (stop > end)
			stop = end;
		/* a run past the end, though asked up to it */
		if (!run_advances(from, start, stop))
			return EFAULT;
		err = fn(priv, start, stop);
		if (err)
			return err;
		from = stop;
	}
	return 0;
}

/* Runs that touch (split at a group edge, say) make one extent. */
struct merge {
	struct plan_walk *w;
	uint64_t start, end;	/* the extent being merged; end 0: none */
};

static errcode_t merge_run(void *priv, uint64_t start, uint64_t end)
{
	struct merge *m = priv;

	if (m->end == start && m->end != 0) {
		m->end = end;		/* continues across a split */
		return 0;
	}
	if (m->end != 0 && flush_extent(m->w, m->start, m->end))
		return E2TRIM_ERR_INTERRUPTED;
	m->start = start;
	m->end = end;
	return 0;
}

errcode_t plan_run(const struct plan_geometry *geo,
		   const struct plan_range *range,
		   const struct plan_source *src, plan_emit_fn emit,
		   void *emit_priv, struct plan_stats *stats)
{
	struct plan_walk w = { geo, range->minlen_bytes, emit, emit_priv,
			       stats };
	struct merge m = { &w, 0, 0 };
	struct plan_blocks blk;
	errcode_t err;

	memset(stats, 0, sizeof(*stats));
	/*
	 * e2freefrag counts in clusters; a bigalloc extent is whole clusters
	 * (but at a range's edges), so the buckets start at one cluster.
	 */
	stats->hist.unit_bytes = (uint64_t)geo->block_size *
				 (geo->cluster_ratio ? geo->cluster_ratio : 1);
	for (unsigned int i = 0; i < E2TRIM_HISTOGRAM_BUCKETS; i++)
		stats->hist.bucket[i].min_bytes =
			(stats->hist.unit_bytes << i) >> i == stats->hist.unit_bytes ?
			stats->hist.unit_bytes << i : UINT64_MAX;
	if (plan_check_range(geo, range, &blk))
		return EINVAL;

	err = plan_each_run(src, blk.first, blk.end, merge_run, &m);
	if (!err && m.end != 0 && flush_extent(&w, m.start, m.end))
		return E2TRIM_ERR_INTERRUPTED;
	return err;
}
