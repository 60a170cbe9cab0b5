/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * outcome.h - what happened to one target, kept for the report and the
 * --json document (outcome.c), below the target list that holds it
 */
#ifndef E2TRIM_OUTCOME_H
#define E2TRIM_OUTCOME_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* --list with --json: one discarded range */
struct outcome_range {
	uint64_t start_bytes, len_bytes;
};

/* a growing list of messages */
struct outcome_texts {
	char **v;
	unsigned int n;
};

/* What happened to one target: filled in by run_target(). */
struct outcome {
	errcode_t err;
	int exit_code;
	char message[1024];		/* the error in words, "" if none */
	struct e2trim_result res;	/* a copy, taken before the handle goes */
	struct e2trim_histogram hist;	/* --histogram: a copy too */
	unsigned int opened : 1,	/* res has the filesystem's fields */
		     applied : 1,	/* res has the device and the result */
		     unsupported : 1,	/* --quiet-unsupported: it cannot discard */
		     lost : 1;		/* out of memory: ranges or texts missing */
	struct outcome_range *ranges;	/* --json --list */
	size_t nranges, ranges_cap;
	struct outcome_texts forced;	/* gates --force let pass, in words */
	struct outcome_texts warnings;	/* the library's warnings */
};

/* Keep a range, a text; -1 when out of memory. */
int outcome_add_range(struct outcome *o, uint64_t start_bytes,
		      uint64_t len_bytes);
int outcome_add_text(struct outcome_texts *l, const char *text);
void outcome_free(struct outcome *o);

/*
 * @t's result and histogram into @o's copies.  The command may run on an
 * older libe2trim.so.1 than its header (the package's symbols file allows
 * it): what the library's struct_size covers is copied, the members it
 * is too old for are zero (E2TRIM_HAS would say false for them).
 */
void outcome_take(struct outcome *o, const struct e2trim *t);

/*
 * --quiet-unsupported and @err says the disk cannot discard (at all, or
 * this way; an NBD server that cannot trim): as fstrim's option means
 * it, no message and exit 0, not a failed unit at every boot.
 */
int outcome_unsupported(const struct cli_control *ctl, errcode_t err);

#endif /* E2TRIM_OUTCOME_H */
