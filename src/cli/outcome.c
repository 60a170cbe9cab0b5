// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * outcome.c - what one target leaves for the --json document beyond its
 * numbers: the ranges of --list, the gates --force let pass and the
 * library's warnings, each kept until the document is written; and
 * whether --quiet-unsupported makes its failure none.
 */
#include <stdlib.h>
#include <string.h>

#include "outcome.h"

int outcome_unsupported(const struct cli_control *ctl, errcode_t err)
{
	return ctl->quiet_unsupported &&
	       (err == E2TRIM_ERR_UNSUPPORTED ||
		err == E2TRIM_ERR_DISCARD_UNSUPPORTED ||
		err == E2TRIM_ERR_NBD_NO_TRIM);
}

int outcome_add_range(struct outcome *o, uint64_t start_bytes,
		      uint64_t len_bytes)
{
	struct outcome_range *v;
	size_t cap;

	if (o->nranges == o->ranges_cap) {
		cap = o->ranges_cap ? o->ranges_cap * 2 : 64;
		v = realloc(o->ranges, cap * sizeof(*v));
		if (!v)
			return -1;
		o->ranges = v;
		o->ranges_cap = cap;
	}
	o->ranges[o->nranges].start_bytes = start_bytes;
	o->ranges[o->nranges].len_bytes = len_bytes;
	o->nranges++;
	return 0;
}

int outcome_add_text(struct outcome_texts *l, const char *text)
{
	char **v, *dup = strdup(text);

	if (!dup)
		return -1;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v) {
		free(dup);
		return -1;
	}
	v[l->n++] = dup;
	l->v = v;
	return 0;
}

static void texts_free(struct outcome_texts *l)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void outcome_free(struct outcome *o)
{
	free(o->ranges);
	o->ranges = NULL;
	o->nranges = o->ranges_cap = 0;
	texts_free(&o->forced);
	texts_free(&o->warnings);
}

/* What both the header and the library know; zeros past the library's. */
static void copy_sized(void *dst, size_t dst_size, const void *src,
		       uint32_t src_size)
{
	memset(dst, 0, dst_size);
	memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
}

void outcome_take(struct outcome *o, const struct e2trim *t)
{
	const struct e2trim_result *r = e2trim_result(t);
	const struct e2trim_histogram *h = e2trim_histogram(t);

	copy_sized(&o->res, sizeof(o->res), r, r->struct_size);
	copy_sized(&o->hist, sizeof(o->hist), h, h->struct_size);
}
