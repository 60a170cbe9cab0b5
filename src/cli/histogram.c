// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * histogram.c - --histogram: the free extents by size, as e2freefrag
 *
 * e2freefrag's "HISTOGRAM OF FREE EXTENT SIZES" in e2trim's words: the
 * extents are those e2trim sees (merged across groups, inside the range,
 * before the minimum), counted in bytes, so that bigalloc's clusters are
 * right too.  Each bucket runs from a power of two times the cluster up
 * to the next.
 */
#include <inttypes.h>

#include "histogram.h"
#include "size.h"

void histogram_print(FILE *f, const char *device,
		     const struct e2trim_histogram *h)
{
	char lo[HUMAN_SIZE_LEN], hi[HUMAN_SIZE_LEN], unit[HUMAN_SIZE_LEN];
	const struct e2trim_histogram_bucket *b;
	unsigned int i;

	fprintf(f, "%s: histogram of free extent sizes (cluster %s):\n",
		device, size_to_human(h->unit_bytes, unit, sizeof(unit)));
	fprintf(f, "%23s  %12s  %20s  %7s\n", "extent size range",
		"free extents", "free bytes", "percent");
	for (i = 0; i < h->nbuckets; i++) {
		b = &h->bucket[i];
		if (!b->extents)
			continue;
		size_to_human(b->min_bytes, lo, sizeof(lo));
		if (i + 1 < E2TRIM_HISTOGRAM_BUCKETS &&
		    h->bucket[i + 1].min_bytes != UINT64_MAX)
			size_to_human(h->bucket[i + 1].min_bytes, hi, sizeof(hi));
		else
			snprintf(hi, sizeof(hi), "...");
		fprintf(f, "%10s - %10s  %12" PRIu64 "  %20" PRIu64 "  %6.2f%%\n",
			lo, hi, b->extents, b->bytes,
			h->bytes ? b->bytes * 100.0 / h->bytes : 0.0);
	}
	fprintf(f, "%23s  %12" PRIu64 "  %20" PRIu64 "  %6.2f%%\n", "total",
		h->extents, h->bytes, h->bytes ? 100.0 : 0.0);
}
