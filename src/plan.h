/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan.h - from free runs of blocks to the byte extents that get trimmed
 *
 * The plan is pure: it sees the filesystem only through its geometry and a
 * source of free runs, and hands each extent to a callback.  It never
 * allocates, so its memory is that of the bitmap behind the source.
 */
#ifndef E2TRIM_PLAN_H
#define E2TRIM_PLAN_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "e2trim.h"

struct plan_geometry {
	uint32_t block_size;		/* bytes per block */
	uint32_t cluster_ratio;		/* blocks per cluster, 1 unless bigalloc */
	uint64_t first_data_block;	/* blocks below it are never free space */
	uint64_t blocks_count;		/* blocks in the filesystem */
};

/* FITRIM-like range, in bytes from the start of the filesystem. */
struct plan_range {
	uint64_t start_bytes;
	uint64_t len_bytes;		/* UINT64_MAX: to the end */
	uint64_t minlen_bytes;		/* shorter extents are skipped */
};

/*
 * A source of free runs.  next_free() finds the first free run that
 * starts at or after block @from and at or before block @last; it sets
 * [*run_start, *run_end) and returns 0, returns ENOENT when there is none,
 * or another error code.  A run may end after @last; the plan clips it.
 * Runs may be split anywhere (at group edges, say): the plan merges them.
 */
struct plan_source {
	errcode_t (*next_free)(void *priv, uint64_t from, uint64_t last,
			       uint64_t *run_start, uint64_t *run_end);
	void *priv;
};

/*
 * Each free run of @src in [from, end), clipped to it, in ascending order:
 * @fn(priv, start, stop) for each, until it returns non-zero (returned).
 * Else 0, the source's error, or EFAULT when a run does not move the walk
 * on (run_advances() in walk.h: a damaged source).  Every walk over a
 * source goes through here.
 */
typedef errcode_t (*plan_run_fn)(void *priv, uint64_t start, uint64_t stop);
errcode_t plan_each_run(const struct plan_source *src, uint64_t from,
			uint64_t end, plan_run_fn fn, void *priv);

/* Called once per extent, in ascending order; non-zero stops the plan. */
typedef int (*plan_emit_fn)(void *priv, uint64_t start_bytes,
			    uint64_t len_bytes);

struct plan_stats {
	uint64_t extents;		/* extents handed to emit */
	uint64_t bytes;			/* their total length */
	uint64_t skipped_extents;	/* free extents shorter than minlen */
	uint64_t skipped_bytes;
	/* every free extent of the range, before the minimum */
	struct e2trim_histogram hist;
};

/*
 * Count one free extent of @len_bytes in @h, whose unit_bytes (a power
 * of two) must be set: bucket i holds unit << i up to unit << (i + 1).
 */
void plan_hist_add(struct e2trim_histogram *h, uint64_t len_bytes);

/* Blocks [first, end) that a range covers; what plan_check_range fills. */
struct plan_blocks {
	uint64_t first;
	uint64_t end;
};

/*
 * Turn a byte range into the blocks it wholly covers, clipped to the
 * filesystem's data blocks.  Returns 0, or EINVAL when the range starts
 * at or past the end of the filesystem or is shorter than one block (as
 * FITRIM does).  An empty result (first == end) is not an error.
 */
errcode_t plan_check_range(const struct plan_geometry *geo,
			   const struct plan_range *range,
			   struct plan_blocks *out);

/*
 * Walk the free runs inside @range, merged across any split the source
 * makes, and emit every one that is at least minlen long.  Returns 0, the
 * source's error, or E2TRIM_ERR_INTERRUPTED when emit asked to stop
 * (the library's one code for "stopped": see lib_cancelled()).  @stats
 * is always valid.
 */
errcode_t plan_run(const struct plan_geometry *geo,
		   const struct plan_range *range,
		   const struct plan_source *src, plan_emit_fn emit,
		   void *emit_priv, struct plan_stats *stats);

#endif /* E2TRIM_PLAN_H */
