// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply_walk.c - the plan walked extent by extent, for e2trim_plan() and
 * e2trim_apply() (apply.c)
 *
 * Each extent goes to the caller's callback, or (apply) to the target,
 * after the looks between batches: a loop device attached, a path opened
 * for writing, a writer that came and went since open stop the walk
 * before the next discard.  With a progress callback the plan's total is
 * counted first, one walk ahead.
 */
#include <stdint.h>

#include "apply_walk.h"
#include "e2trim_int.h"
#include "open_hold.h"
#include "open_paths.h"
#include "open_witness.h"
#include "target.h"

/*
 * What the target is given to discard: the extent trimmed inward to the
 * granularity, in bytes of the file or device named (with a partition,
 * shifted by its start), so that the numbers can be fed to fallocate
 * --punch-hole or blkdiscard as they are.  Nothing when nothing is left.
 */
static int list_aligned(struct apply_walk *w, uint64_t start_bytes,
			uint64_t len_bytes)
{
	uint64_t s = start_bytes, e = start_bytes + len_bytes;

	if (!target_align(w->target, &s, &e))
		return 0;
	return w->fn(w->priv, w->target->base_bytes + s, e - s);
}

static int walk_extent(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	struct apply_walk *w = priv;
	struct e2trim_result *r = &w->t->res;
	errcode_t rc;

	r->extents++;
	r->extent_bytes += len_bytes;
	/* cancelled (a signal, a callback) since the last extent: stop */
	if (lib_cancelled(w->t))
		return 1;
	if (!w->target)
		return w->fn && w->fn(w->priv, start_bytes, len_bytes);
	/* a loop device attached since open: stop before the next discard */
	if (!w->target->dryrun) {
		w->refused = recheck_loop_devices_now_and_then(w->t);
		if (!w->refused)
			w->refused = open_paths_recheck_now_and_then(w->t);
		/* a writer that came and went since the last look: its trace */
		if (!w->refused)
			w->refused = witness_look_now_and_then(w->t);
		if (w->refused)
			return 1;
	}
	rc = target_trim(w->target, start_bytes, len_bytes);
	r->requests = w->target->stats.requests;
	r->bytes_trimmed = w->target->stats.bytes;
	/*
	 * @fn hears of an extent once every request for it went out (those
	 * in flight finish whatever happens): one that a cancel or an error
	 * stopped half way is not said to be trimmed.
	 */
	if (!rc && w->fn && list_aligned(w, start_bytes, len_bytes))
		return 1;
	return rc != 0;
}

void apply_walk_stats(struct e2trim_result *r, const struct target *tg)
{
	const struct target_stats *ts = &tg->stats;

	r->requests = ts->requests;
	r->bytes_trimmed = ts->bytes;
	r->bytes_already_sparse = ts->sparse_bytes;
	r->bytes_kept_for_alignment = ts->align_bytes;
	r->extents_too_small_aligned = ts->align_extents;
	r->bytes_zeroed = ts->zeroed_bytes;
	r->bytes_already_zero = ts->zero_bytes;
	r->requests_unconfirmed = ts->unconfirmed;
	r->bytes_unconfirmed = ts->unconfirmed_bytes;
	r->unconfirmed_start_bytes = ts->unconfirmed_start;
	/* the result keeps the kernel's sign: -errno, 0 when none failed */
	r->error_errno = -(int)tg->error;
	r->error_start_bytes = tg->error_start;
}

/* Walk the plan, each extent to walk_extent(); count what it skipped. */
errcode_t apply_walk_run(struct e2trim *t, struct apply_walk *w)
{
	struct e2trim_result *r = &t->res;
	struct plan_source src;
	struct plan_stats st;
	errcode_t err;

	r->extents = r->extent_bytes = 0;
	r->interrupted = 0;
	bitmap_stream_source(t->stream, &src);
	err = plan_run(&t->geo, &t->range, &src, walk_extent, w, &st);
	r->extents_below_minimum = st.skipped_extents;
	r->bytes_below_minimum = st.skipped_bytes;
	t->hist = st.hist;
	t->hist.struct_size = sizeof(t->hist);
	return err;
}

static int count_only(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	(void)priv;
	(void)start_bytes;
	(void)len_bytes;
	return 0;
}

static void target_progressed(void *priv, uint64_t done)
{
	struct apply_walk_progress *ap = priv;

	lib_progress(ap->t, ap->stage, done < ap->total ? done : ap->total,
		     ap->total);
}

/* With a progress callback: the plan's total first, one walk ahead. */
errcode_t apply_walk_progress_start(struct e2trim *t, struct target *tg,
				    struct apply_walk_progress *ap)
{
	struct plan_source src;
	struct plan_stats st;
	errcode_t err;

	if (!t->progress)
		return 0;
	bitmap_stream_source(t->stream, &src);
	err = plan_run(&t->geo, &t->range, &src, count_only, NULL, &st);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_SCAN, err, NULL);
	ap->t = t;
	ap->stage = tg->mode == TRIM_ZERO_FILL ? E2TRIM_STAGE_ZERO_FILL :
						 E2TRIM_STAGE_TRIM;
	ap->total = st.bytes;
	tg->progress = target_progressed;
	tg->progress_priv = ap;
	lib_progress(t, ap->stage, 0, ap->total);
	return 0;
}
