/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * apply_walk.h - the plan walked extent by extent (apply_walk.c), for the
 * stages of apply.c
 */
#ifndef E2TRIM_APPLY_WALK_H
#define E2TRIM_APPLY_WALK_H

#include "e2trim_int.h"
#include "target.h"

/* A plan walk: the caller's callback, then (apply) the target. */
struct apply_walk {
	struct e2trim *t;
	struct target *target;		/* NULL: plan only */
	e2trim_extent_fn fn;
	void *priv;
	errcode_t refused;		/* a look between batches refused */
};

/* Progress of the apply stage: the plan's bytes the target is done with. */
struct apply_walk_progress {
	struct e2trim *t;
	enum e2trim_stage stage;
	uint64_t total;
};

/*
 * Walk @t's plan over its range, each extent to @w (the caller's callback,
 * the looks between batches, the target); the result counts the extents
 * and what the minimum skipped, the histogram is taken.  0, or the plan's
 * code (E2TRIM_ERR_INTERRUPTED when @w stopped it: @w->refused says why
 * when a look refused).
 */
errcode_t apply_walk_run(struct e2trim *t, struct apply_walk *w);

/* The target's counts and its first error, into the result. */
void apply_walk_stats(struct e2trim_result *r, const struct target *tg);

/*
 * With a progress callback on @t: the plan's total counted first (one
 * walk ahead), then @tg reports its progress through @ap.  0 without one.
 */
errcode_t apply_walk_progress_start(struct e2trim *t, struct target *tg,
				    struct apply_walk_progress *ap);

#endif /* E2TRIM_APPLY_WALK_H */
