// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - what e2trim tells the person: extents, totals, partial runs
 *
 * The first -v line is fstrim's, word for word, so that scripts written
 * for fstrim -v read e2trim too; the details go on a second line.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"
#include "size.h"

void report_extent(const struct e2trim_control *ctl, uint64_t start_bytes,
		   uint64_t len_bytes)
{
	if (ctl->list)
		printf("%" PRIu64 " %" PRIu64 "\n", start_bytes, len_bytes);
}

void report_minlen_raised(const struct e2trim_control *ctl,
			  uint64_t minlen_bytes)
{
	char h[HUMAN_SIZE_LEN];

	if (ctl->verbose && !ctl->quiet)
		printf("%s: minimum raised to %s, the discard granularity\n",
		       ctl->device, size_to_human(minlen_bytes, h, sizeof(h)));
}

void report_summary(const struct e2trim_control *ctl,
		    const struct plan_stats *ps, const struct target *t)
{
	const struct target_stats *ts = &t->stats;
	char h[HUMAN_SIZE_LEN];

	if (!ctl->verbose || ctl->quiet)
		return;
	printf("%s: %s (%" PRIu64 " bytes) trimmed%s\n", ctl->device,
	       size_to_human(ts->bytes, h, sizeof(h)), ts->bytes,
	       ctl->dryrun ? " (dry run)" : "");
	printf("%s: %" PRIu64 " free extent%s, %" PRIu64 " request%s",
	       ctl->device, ps->extents, ps->extents == 1 ? "" : "s",
	       ts->requests, ts->requests == 1 ? "" : "s");
	if (ts->sparse_bytes)
		printf(", %s already sparse",
		       size_to_human(ts->sparse_bytes, h, sizeof(h)));
	if (ps->skipped_extents)
		printf(", %" PRIu64 " shorter than the minimum skipped (%s)",
		       ps->skipped_extents,
		       size_to_human(ps->skipped_bytes, h, sizeof(h)));
	if (ts->align_bytes)
		printf(", %s kept back for alignment",
		       size_to_human(ts->align_bytes, h, sizeof(h)));
	printf("\n");
}

void report_partial(const struct e2trim_control *ctl, const struct target *t,
		    const char *why)
{
	char h[HUMAN_SIZE_LEN];

	fprintf(stderr, "%s: %s: %s after %s (%" PRIu64 " bytes) trimmed in "
		"%" PRIu64 " request%s; the rest of the free space is "
		"untouched\n", program_name, ctl->device, why,
		size_to_human(t->stats.bytes, h, sizeof(h)), t->stats.bytes,
		t->stats.requests, t->stats.requests == 1 ? "" : "s");
}
