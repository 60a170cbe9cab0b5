/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - what e2trim tells the person: extents, totals, partial runs
 */
#ifndef E2TRIM_REPORT_H
#define E2TRIM_REPORT_H

#include "e2trim.h"
#include "plan.h"

/* --list: "<start> <length>" in bytes, one extent per line. */
void report_extent(const struct e2trim_control *ctl, uint64_t start_bytes,
		   uint64_t len_bytes);

/*
 * -v: the fstrim line "<device>: 229.9 MiB (241067008 bytes) trimmed",
 * then how many extents that was and what minlen left out.
 */
void report_summary(const struct e2trim_control *ctl,
		    const struct plan_stats *st);

#endif /* E2TRIM_REPORT_H */
