// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - what e2trim tells the person: extents, totals, partial runs
 *
 * The first -v line is fstrim's, word for word, so that scripts written
 * for fstrim -v read e2trim too; the details go on a second line.  Every
 * number comes from the library's result (struct e2trim_result).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "report.h"
#include "size.h"

/*
 * A name as lsblk -r writes it: one word, a space, a backslash, a quote
 * or any byte that is not printable ASCII as \xHH, so that a line always
 * splits into its three columns and the exact name can be got back.
 */
static void raw_name(FILE *out, const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '\\' || *p == '"' ||
		    *p == '\'')
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
}

void report_extent(const struct cli_control *ctl, uint64_t start_bytes,
		   uint64_t len_bytes)
{
	FILE *out = cli_out();

	if (!ctl->list)
		return;
	/* several targets: which one each range is on, in a first column */
	if (ctl->several) {
		raw_name(out, ctl->device);
		fputc(' ', out);
	}
	fprintf(out, "%" PRIu64 " %" PRIu64 "\n", start_bytes, len_bytes);
}

void report_minlen_raised(const struct cli_control *ctl,
			  const struct e2trim_result *r)
{
	char h[HUMAN_SIZE_LEN];
	FILE *out = cli_out();

	/* a note only when -m asked for less, or -v -v wants every note */
	if (ctl->verbose && !ctl->quiet &&
	    (r->range_minlen_bytes || ctl->verbose > 1) &&
	    r->minlen_applied_bytes > r->range_minlen_bytes)
		fprintf(out, "%s: minimum raised to %s, the discard granularity\n",
			ctl->shown,
			size_to_human(r->minlen_applied_bytes, h, sizeof(h)));
}

/* --zero-fill -v: what was written, and what was zero already. */
static void report_zero_fill(const struct cli_control *ctl,
			     const struct e2trim_result *r)
{
	char h[HUMAN_SIZE_LEN], z[HUMAN_SIZE_LEN];

	fprintf(cli_out(), "%s: %s (%" PRIu64 " bytes) zeroed%s, %s (%" PRIu64
		" bytes) already zero\n", ctl->shown,
		size_to_human(r->bytes_zeroed, h, sizeof(h)), r->bytes_zeroed,
		r->dryrun ? " (dry run)" : "",
		size_to_human(r->bytes_already_zero, z, sizeof(z)),
		r->bytes_already_zero);
}

void report_summary(const struct cli_control *ctl,
		    const struct e2trim_result *r)
{
	char h[HUMAN_SIZE_LEN];
	FILE *out = cli_out();

	if (!ctl->verbose || ctl->quiet)
		return;
	if (ctl->opts.mode == E2TRIM_ZERO_FILL)
		report_zero_fill(ctl, r);
	else
		fprintf(out, "%s: %s (%" PRIu64 " bytes) trimmed%s\n",
			ctl->shown,
			size_to_human(r->bytes_trimmed, h, sizeof(h)),
			r->bytes_trimmed, r->dryrun ? " (dry run)" : "");
	fprintf(out, "%s: %" PRIu64 " free extent%s, %" PRIu64 " request%s",
		ctl->shown, r->extents, r->extents == 1 ? "" : "s",
		r->requests, r->requests == 1 ? "" : "s");
	if (r->bytes_already_sparse)
		fprintf(out, ", %s already sparse",
			size_to_human(r->bytes_already_sparse, h, sizeof(h)));
	if (r->extents_below_minimum)
		fprintf(out, ", %" PRIu64 " shorter than the minimum skipped (%s)",
			r->extents_below_minimum,
			size_to_human(r->bytes_below_minimum, h, sizeof(h)));
	if (r->bytes_kept_for_alignment)
		fprintf(out, ", %s kept back for alignment",
			size_to_human(r->bytes_kept_for_alignment, h,
				     sizeof(h)));
	fprintf(out, "\n");
	report_allocated(ctl, r);
}

/*
 * The image file's allocated size before and after, and the saving: what
 * du shows, the number that matters for a VM image (a qcow2's own file).
 */
void report_allocated(const struct cli_control *ctl,
		      const struct e2trim_result *r)
{
	char b[HUMAN_SIZE_LEN], a[HUMAN_SIZE_LEN], s[HUMAN_SIZE_LEN];
	FILE *out = cli_out();
	uint64_t before = r->allocated_before_bytes;
	uint64_t after = r->allocated_after_bytes;

	if (!ctl->verbose || ctl->quiet || !r->allocated_known)
		return;
	/* a dry run frees nothing: say what the trim would */
	if (r->dryrun) {
		fprintf(out, "%s: %s%sallocated %s; the trim would free up to "
			"%s (dry run)\n", ctl->shown, r->image_format,
			r->image_format[0] ? " image " : "image ",
			size_to_human(before, b, sizeof(b)),
			size_to_human(r->bytes_trimmed, s, sizeof(s)));
		return;
	}
	if (r->allocated_known == E2TRIM_ALLOCATED_BEFORE_ONLY) {
		fprintf(out, "%s: %s%sallocated %s before, after unknown (the "
			"last look failed)\n", ctl->device, r->image_format,
			r->image_format[0] ? " image " : "image ",
			size_to_human(before, b, sizeof(b)));
		return;
	}
	/* a split extent can cost the host a block of its extent tree */
	fprintf(out, "%s: %s%sallocated %s before, %s after, %s %s\n",
		ctl->shown, r->image_format, r->image_format[0] ? " image " :
		"image ", size_to_human(before, b, sizeof(b)),
		size_to_human(after, a, sizeof(a)),
		size_to_human(after > before ? after - before : before - after,
			      s, sizeof(s)),
		after > before ? "more" : "saved");
}

/*
 * Requests sent that failed or got no answer: the server may still carry
 * them out, so "the rest is untouched" would not be the whole truth.
 * E2TRIM_HAS: a library older than the member never counts them.
 */
static void unconfirmed(const struct e2trim_result *r, char *buf, size_t len)
{
	char h[HUMAN_SIZE_LEN];
	uint64_t k;

	buf[0] = '\0';
	if (!E2TRIM_HAS(r, struct e2trim_result, unconfirmed_start_bytes) ||
	    !r->requests_unconfirmed)
		return;
	k = r->requests_unconfirmed;
	snprintf(buf, len, ", and %" PRIu64 " request%s of %s (%" PRIu64
		 " bytes) from byte %" PRIu64 " on %s sent but failed or got "
		 "no answer: the storage may still carry %s out", k,
		 k == 1 ? "" : "s",
		 size_to_human(r->bytes_unconfirmed, h, sizeof(h)),
		 r->bytes_unconfirmed, r->unconfirmed_start_bytes,
		 k == 1 ? "was" : "were", k == 1 ? "it" : "them");
}

void report_partial(const struct cli_control *ctl,
		    const struct e2trim_result *r, const char *why)
{
	report_partial_fix(ctl, r, why, NULL);
}

void report_partial_fix(const struct cli_control *ctl,
			const struct e2trim_result *r, const char *why,
			const char *message)
{
	char h[HUMAN_SIZE_LEN], z[HUMAN_SIZE_LEN], u[256];
	size_t n = strlen(why);
	/* the message is "<why>; <fix>" (the detail leads) */
	const char *fix = message && !strncmp(message, why, n) &&
			  !strncmp(message + n, "; ", 2) ? message + n : "";

	if (ctl->opts.mode == E2TRIM_ZERO_FILL) {
		warnx_target(ctl->device, "%s after %s (%" PRIu64 " bytes) of "
			     "the free space, %s zeroed; the rest is "
			     "untouched%s", why,
			     size_to_human(r->bytes_trimmed, h, sizeof(h)),
			     r->bytes_trimmed,
			     size_to_human(r->bytes_zeroed, z, sizeof(z)), fix);
		return;
	}
	unconfirmed(r, u, sizeof(u));
	warnx_target(ctl->device, "%s after %s (%" PRIu64 " bytes) trimmed in "
		     "%" PRIu64 " request%s%s; the rest of the free space is "
		     "untouched%s", why,
		     size_to_human(r->bytes_trimmed, h, sizeof(h)),
		     r->bytes_trimmed, r->requests,
		     r->requests == 1 ? "" : "s", u, fix);
}
