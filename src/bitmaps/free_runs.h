/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * free_runs.h - a list of free runs kept in memory, replayed as a source
 */
#ifndef E2TRIM_FREE_RUNS_H
#define E2TRIM_FREE_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

struct free_runs {
	uint64_t (*run)[2];	/* [start, end) in blocks, ascending */
	size_t n, cap;
	size_t max;		/* runs it may hold */
	int overflow;		/* more than max were added: list dropped */
	size_t cursor;		/* where the source's last answer was */
};

/*
 * Append [start, end), which must not begin before the last run ends;
 * a run that touches the last one extends it.  Beyond @max runs, or when
 * memory runs out, the list is dropped and overflow set; that is no
 * error: the caller reads the bitmap again instead.  Returns 0, or
 * EXT2_ET_INVALID_ARGUMENT for a run out of order.
 */
errcode_t free_runs_add(struct free_runs *fr, uint64_t start, uint64_t end);

/* The runs as a plan source (see plan.h), for any number of passes. */
void free_runs_source(struct free_runs *fr, struct plan_source *src);

void free_runs_free(struct free_runs *fr);

#endif /* E2TRIM_FREE_RUNS_H */
