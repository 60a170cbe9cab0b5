// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * free_runs.c - a list of free runs kept in memory, replayed as a source
 *
 * Pure: no filesystem, no I/O.  The bitmap's first pass fills it; the
 * verification and the plan read it back through the plan_source
 * interface, exactly as they would read the bitmap.
 */
#include <errno.h>

#include <ext2fs/ext2fs.h>

#include "free_runs.h"

#define FIRST_CAP 1024

errcode_t free_runs_add(struct free_runs *fr, uint64_t start, uint64_t end)
{
	size_t cap;
	errcode_t err;

	if (fr->overflow || start >= end)
		return 0;
	if (fr->n && start < fr->run[fr->n - 1][1])
		return EXT2_ET_INVALID_ARGUMENT;
	if (fr->n && start == fr->run[fr->n - 1][1]) {
		fr->run[fr->n - 1][1] = end;
		return 0;
	}
	if (fr->n == fr->max) {
		free_runs_free(fr);
		fr->overflow = 1;
		return 0;
	}
	if (fr->n == fr->cap) {
		cap = fr->cap ? 2 * fr->cap : FIRST_CAP;
		if (cap > fr->max)
			cap = fr->max;
		err = ext2fs_resize_mem(fr->cap * sizeof(*fr->run),
					cap * sizeof(*fr->run), &fr->run);
		if (err) {
			/* no memory for the list: read the bitmap again */
			free_runs_free(fr);
			fr->overflow = 1;
			return 0;
		}
		fr->cap = cap;
	}
	fr->run[fr->n][0] = start;
	fr->run[fr->n][1] = end;
	fr->n++;
	return 0;
}

/* The first run that ends after @from, or fr->n. */
static size_t first_ending_after(const struct free_runs *fr, uint64_t from)
{
	size_t lo = 0, hi = fr->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fr->run[mid][1] > from)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * The plan and the verification walk forward, so the last run returned
 * or the one after it is nearly always the answer: try those before
 * searching.
 */
static errcode_t runs_next_free(void *priv, uint64_t from, uint64_t last,
				uint64_t *run_start, uint64_t *run_end)
{
	struct free_runs *fr = priv;
	size_t i = fr->cursor;
	uint64_t start;

	if (i < fr->n && fr->run[i][1] <= from)
		i++;		/* the last answer ended at or before from */
	if (i >= fr->n || fr->run[i][1] <= from ||
	    (i > 0 && fr->run[i - 1][1] > from))
		i = first_ending_after(fr, from);
	fr->cursor = i;

	if (i == fr->n)
		return ENOENT;
	start = fr->run[i][0] > from ? fr->run[i][0] : from;
	if (start > last)
		return ENOENT;
	*run_start = start;
	*run_end = fr->run[i][1];
	return 0;
}

void free_runs_source(struct free_runs *fr, struct plan_source *src)
{
	fr->cursor = 0;
	src->next_free = runs_next_free;
	src->priv = fr;
}

void free_runs_free(struct free_runs *fr)
{
	ext2fs_free_mem(&fr->run);
	fr->n = 0;
	fr->cap = 0;
}
