/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - what e2trim tells the person: extents, totals, partial runs
 */
#ifndef E2TRIM_REPORT_H
#define E2TRIM_REPORT_H

#include "cli.h"

/*
 * --list: "<start> <length>" in bytes of the file or device named, one
 * aligned extent per line.
 */
void report_extent(const struct cli_control *ctl, uint64_t start_bytes,
		   uint64_t len_bytes);

/* -v: the minimum was raised to what the device can discard. */
void report_minlen_raised(const struct cli_control *ctl,
			  const struct e2trim_result *r);

/*
 * -v: the fstrim line "<device>: 229.9 MiB (241067008 bytes) trimmed",
 * then extents, requests, and what was left out and why.
 */
void report_summary(const struct cli_control *ctl,
		    const struct e2trim_result *r);

/*
 * A run that stopped early, on stderr whatever -q says: why, and exactly
 * how much had been trimmed by then.
 */
void report_partial(const struct cli_control *ctl,
		    const struct e2trim_result *r, const char *why);
/* The same, ending with the fix of @message ("<why>; <fix>"), if any. */
void report_partial_fix(const struct cli_control *ctl,
			const struct e2trim_result *r, const char *why,
			const char *message);

/* -v: the image file's allocated size before and after. */
void report_allocated(const struct cli_control *ctl,
		      const struct e2trim_result *r);

#endif /* E2TRIM_REPORT_H */
