// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - what e2trim tells the person: extents, totals, partial runs
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

void report_summary(const struct e2trim_control *ctl,
		    const struct plan_stats *st)
{
	char human[HUMAN_SIZE_LEN];

	if (!ctl->verbose || ctl->quiet)
		return;
	printf("%s: %s (%" PRIu64 " bytes) trimmed%s\n", ctl->device,
	       size_to_human(st->bytes, human, sizeof(human)), st->bytes,
	       ctl->dryrun ? " (dry run)" : "");
	printf("%s: %" PRIu64 " extent%s", ctl->device, st->extents,
	       st->extents == 1 ? "" : "s");
	if (st->skipped_extents)
		printf(", %" PRIu64 " shorter than the minimum skipped (%s)",
		       st->skipped_extents,
		       size_to_human(st->skipped_bytes, human, sizeof(human)));
	printf("\n");
}
