// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json.c - a small JSON writer for --json
 *
 * Enough for one document in lsblk -J's layout: objects, arrays,
 * strings, integers, a few seconds, true/false/null, indented by two
 * spaces.  Strings are escaped as RFC 8259 asks: the quote, the
 * backslash and every control character.  The document is always valid
 * UTF-8, which strict parsers require: a path or a label is bytes, not
 * text, so each byte that is not part of a well-formed UTF-8 sequence
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF)
 * is written as U+FFFD, and json_string() adds a "<key>_raw" member with
 * the exact bytes in hex, from which `xxd -r -p` or Python's
 * bytes.fromhex() gets them back.  Hex rather than base64: jq's
 * @base64d decodes to a string, which would lose the bytes again.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

/* The length of the well-formed UTF-8 sequence at @p (not ASCII), or 0. */
static unsigned int utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	unsigned int n, i;

	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;	/* a continuation byte, C0, C1, F5-FF */
	/* the second byte's range rules out overlongs and surrogates */
	if (*p == 0xe0)
		lo = 0xa0;
	else if (*p == 0xed)
		hi = 0x9f;
	else if (*p == 0xf0)
		lo = 0x90;
	else if (*p == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

int json_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int n;

	while (*p) {
		if (*p < 0x80) {
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

void json_quote(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int n;

	fputc('"', f);
	for (; *p; p++) {
		if (*p >= 0x80) {
			n = utf8_len(p);
			if (!n) {
				fputs("\\ufffd", f);
				continue;
			}
			fwrite(p, 1, n, f);
			p += n - 1;
			continue;
		}
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void indent(struct json *j)
{
	unsigned int i;

	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* The separator, indentation and key before a member's value. */
static void member(struct json *j, const char *key)
{
	if (j->written[j->depth])
		fputc(',', j->f);
	fputc('\n', j->f);
	j->written[j->depth] = 1;
	indent(j);
	if (key) {
		json_quote(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_with(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->written[j->depth] = 0;
	j->closer[j->depth] = c == '{' ? '}' : ']';
}

void json_begin(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->written[0] = 0;
	fputc('{', f);
	j->depth = 1;
	j->written[1] = 0;
	j->closer[1] = '}';
}

void json_open(struct json *j, const char *key)
{
	open_with(j, key, '{');
}

void json_open_array(struct json *j, const char *key)
{
	open_with(j, key, '[');
}

/* The innermost object or array ends (the document too, at depth 1). */
static void close_with(struct json *j, char c)
{
	int empty = !j->written[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty) {
		fputc('\n', j->f);
		indent(j);
	}
	fputc(c, j->f);
}

void json_close(struct json *j)
{
	close_with(j, j->closer[j->depth]);
}

void json_end(struct json *j)
{
	close_with(j, '}');
	fputc('\n', j->f);
	fflush(j->f);
}

void json_string(struct json *j, const char *key, const char *val)
{
	char raw_key[64];
	const unsigned char *p;

	member(j, key);
	if (!val) {
		fputs("null", j->f);
		return;
	}
	json_quote(j->f, val);
	if (!key || json_utf8_valid(val))
		return;
	/* the exact bytes, which the U+FFFD above could not keep */
	snprintf(raw_key, sizeof(raw_key), "%s_raw", key);
	member(j, raw_key);
	fputc('"', j->f);
	for (p = (const unsigned char *)val; *p; p++)
		fprintf(j->f, "%02x", *p);
	fputc('"', j->f);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void json_int(struct json *j, const char *key, long long val)
{
	member(j, key);
	fprintf(j->f, "%lld", val);
}

void json_seconds(struct json *j, const char *key, double val)
{
	member(j, key);
	fprintf(j->f, "%.6f", val);
}

void json_bool(struct json *j, const char *key, int val)
{
	member(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

/*
 * The --json document, lsblk -J's way: {"version": 1, "targets": [...],
 * "exit_code": N}, one entry per target in the order given, a refused
 * or failed one too.  What a target never reached is null.  Sizes are
 * bytes, integers.  The schema is in README.md and e2trim(8).
 */
#include "jobs.h"

static const char *status(const struct job *r)
{
	const struct outcome *o = &r->out;

	if (o->unsupported)
		return "unsupported";	/* --quiet-unsupported */
	if (!o->err)
		return o->res.dryrun ? "dry-run" : "trimmed";
	if (o->err == E2TRIM_ERR_INTERRUPTED)
		return "interrupted";
	/*
	 * a refusal, for safety, at whatever stage: at open, or at the
	 * check before the first discard (an RBD image another client
	 * opened meanwhile), when nothing further was sent
	 */
	if ((o->exit_code >= 10 && o->exit_code <= 27) ||
	    o->err == E2TRIM_ERR_DUPLICATE)
		return "refused";
	return "failed";
}

static void filesystem(struct json *j, const struct e2trim_result *r)
{
	json_open(j, "filesystem");
	json_string(j, "type", r->fs_type);
	json_string(j, "uuid", r->uuid);
	json_string(j, "label", r->label);
	json_u64(j, "block_size", r->block_size);
	json_u64(j, "cluster_size", r->cluster_size);
	json_u64(j, "blocks", r->blocks);
	json_u64(j, "free_blocks", r->free_blocks);
	json_u64(j, "offset", r->fs_offset_bytes);
	json_close(j);
}

static void request(struct json *j, const struct cli_control *ctl,
		    const struct outcome *o)
{
	json_open(j, "request");
	json_u64(j, "offset", ctl->range.start_bytes);
	if (ctl->range.len_bytes == UINT64_MAX)
		json_null(j, "length");		/* to the end */
	else
		json_u64(j, "length", ctl->range.len_bytes);
	json_u64(j, "minimum", ctl->range.minlen_bytes);
	if (o->applied)
		json_u64(j, "minimum_applied",
			 o->res.minlen_applied_bytes > ctl->range.minlen_bytes ?
			 o->res.minlen_applied_bytes : ctl->range.minlen_bytes);
	else
		json_null(j, "minimum_applied");
	json_close(j);
}

static void device(struct json *j, const struct outcome *o)
{
	if (!o->applied || !o->res.is_blkdev) {
		json_null(j, "device");		/* image files have none */
		return;
	}
	json_open(j, "device");
	json_u64(j, "discard_granularity", o->res.granularity_bytes);
	json_u64(j, "discard_max_bytes", o->res.max_request_bytes);
	json_u64(j, "discard_alignment", o->res.alignment_bytes);
	json_close(j);
}

static void allocated(struct json *j, const char *key,
		      const struct e2trim_result *r, uint64_t val)
{
	if (r->allocated_known)
		json_u64(j, key, val);
	else
		json_null(j, key);	/* block devices: nothing says */
}

static void result(struct json *j, const struct outcome *o)
{
	const struct e2trim_result *r = &o->res;

	/* refused by the device before its first request: never reached */
	if (!o->applied || (o->err && !r->requests && !r->bytes_trimmed &&
			    !r->bytes_zeroed && !r->bytes_already_zero &&
			    !r->requests_unconfirmed)) {
		json_null(j, "result");
		return;
	}
	json_open(j, "result");
	json_u64(j, "extents", r->extents);
	json_u64(j, "requests", r->requests);
	json_u64(j, "bytes_trimmed", r->bytes_trimmed);
	json_u64(j, "bytes_below_minimum", r->bytes_below_minimum);
	json_u64(j, "bytes_kept_for_alignment", r->bytes_kept_for_alignment);
	json_u64(j, "bytes_already_sparse", r->bytes_already_sparse);
	allocated(j, "allocated_before", r, r->allocated_before_bytes);
	/* the last look failed (rbd du of an image renamed meanwhile) */
	if (r->allocated_known == E2TRIM_ALLOCATED_BEFORE_ONLY)
		json_null(j, "allocated_after");
	else
		allocated(j, "allocated_after", r, r->allocated_after_bytes);
	json_u64(j, "bytes_zeroed", r->bytes_zeroed);
	json_u64(j, "bytes_already_zero", r->bytes_already_zero);
	/* sent, then failed or unanswered: may still be carried out */
	json_u64(j, "requests_unconfirmed", r->requests_unconfirmed);
	json_u64(j, "bytes_unconfirmed", r->bytes_unconfirmed);
	json_seconds(j, "seconds", r->seconds);
	json_close(j);
}

/*
 * --histogram: the free extents by size, bucket by bucket (those with
 * extents only), "max" null for the last, open-ended one.
 */
static void histogram(struct json *j, const struct cli_control *ctl,
		      const struct outcome *o)
{
	const struct e2trim_histogram *h = &o->hist;
	const struct e2trim_histogram_bucket *b;
	unsigned int i;

	if (!ctl->histogram || !o->applied) {
		json_null(j, "histogram");
		return;
	}
	json_open(j, "histogram");
	json_u64(j, "unit", h->unit_bytes);
	json_u64(j, "extents", h->extents);
	json_u64(j, "bytes", h->bytes);
	json_open_array(j, "buckets");
	for (i = 0; i < h->nbuckets; i++) {
		b = &h->bucket[i];
		if (!b->extents)
			continue;
		json_open(j, NULL);
		json_u64(j, "min", b->min_bytes);
		if (i + 1 < E2TRIM_HISTOGRAM_BUCKETS &&
		    h->bucket[i + 1].min_bytes != UINT64_MAX)
			json_u64(j, "max", h->bucket[i + 1].min_bytes);
		else
			json_null(j, "max");
		json_u64(j, "extents", b->extents);
		json_u64(j, "bytes", b->bytes);
		json_close(j);
	}
	json_close(j);
	json_close(j);
}

/* A list of messages (null when there is none to keep). */
static void texts(struct json *j, const char *key,
		  const struct outcome_texts *l)
{
	unsigned int i;

	json_open_array(j, key);
	for (i = 0; i < l->n; i++)
		json_string(j, NULL, l->v[i]);
	json_close(j);
}

/* --list: the ranges discarded, [{"start": N, "length": N}, ...] */
static void list(struct json *j, const struct cli_control *ctl,
		 const struct outcome *o)
{
	size_t i;

	if (!ctl->list || !o->applied) {
		json_null(j, "list");
		return;
	}
	json_open_array(j, "list");
	for (i = 0; i < o->nranges; i++) {
		json_open(j, NULL);
		json_u64(j, "start", o->ranges[i].start_bytes);
		json_u64(j, "length", o->ranges[i].len_bytes);
		json_close(j);
	}
	json_close(j);
}

/*
 * "fix": the command of the message's fix that a script may run as it
 * stands, the span between its first pair of backquotes (src/README.md);
 * null when there is none (no error, or a fix for a person to decide).
 */
static void fix(struct json *j, const struct outcome *o)
{
	const char *a = o->err ? strchr(o->message, '`') : NULL;
	const char *b = a ? strchr(a + 1, '`') : NULL;
	char cmd[sizeof(o->message)];

	if (!b) {
		json_null(j, "fix");
		return;
	}
	snprintf(cmd, sizeof(cmd), "%.*s", (int)(b - a - 1), a + 1);
	json_string(j, "fix", cmd);
}

static void target(struct json *j, const struct cli_control *ctl,
		   const struct job *r)
{
	const struct outcome *o = &r->out;

	json_open(j, NULL);
	json_string(j, "target", r->name);
	if (r->partno)
		json_u64(j, "partition", r->partno);
	else
		json_null(j, "partition");
	json_string(j, "status", status(r));
	json_int(j, "exit_code", o->exit_code);
	json_string(j, "error", o->err ? o->message : NULL);
	fix(j, o);
	if (o->opened)
		filesystem(j, &o->res);
	else
		json_null(j, "filesystem");
	request(j, ctl, o);
	device(j, o);
	result(j, o);
	histogram(j, ctl, o);
	texts(j, "forced", &o->forced);
	texts(j, "warnings", &o->warnings);
	list(j, ctl, o);
	json_close(j);
	if (o->lost)
		warnx_target(r->label, "out of memory: the JSON document "
			     "misses some of its ranges or warnings");
}

void json_document(const struct cli_control *ctl,
		   const struct job_list *l, int exit_code)
{
	struct json j;
	unsigned int i;

	json_begin(&j, stdout);
	json_int(&j, "version", 1);
	json_open_array(&j, "targets");
	for (i = 0; i < l->n; i++)
		target(&j, ctl, &l->v[i]);
	json_close(&j);
	json_int(&j, "exit_code", exit_code);
	json_end(&j);
}
