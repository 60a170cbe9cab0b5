/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * histogram.h - --histogram: the free extents by size, as e2freefrag
 */
#ifndef E2TRIM_HISTOGRAM_H
#define E2TRIM_HISTOGRAM_H

#include <stdio.h>

#include "cli.h"

/*
 * The table of @h on @f: one line per bucket up to the last non-empty
 * one, with the range of sizes, the extents, their bytes and their share
 * of the free space; then the totals.
 */
void histogram_print(FILE *f, const char *device,
		     const struct e2trim_histogram *h);

#endif /* E2TRIM_HISTOGRAM_H */
