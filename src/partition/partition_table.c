// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition_table.c - is a partition table consistent?  A pure check
 *
 * A table entry is a claim, not a fact.  The filesystem in a partition
 * whose entry runs into its neighbour is as large as the lying entry, so
 * its "free" tail is the neighbour's data.  Nothing on the disk says
 * which of two overlapping entries is right: refuse both.
 */
#include <inttypes.h>
#include <stdio.h>

#include "partition_table.h"
#include "walk.h"

static uint64_t entry_end(const struct part_entry *e)
{
	return e->start_bytes + e->size_bytes;
}

static int overlap(const struct part_entry *a, const struct part_entry *b)
{
	return ranges_overlap(a->start_bytes, a->size_bytes, b->start_bytes,
			      b->size_bytes);
}

static int inside(const struct part_entry *in, const struct part_entry *out)
{
	return range_inside(in->start_bytes, in->size_bytes, out->start_bytes,
			    entry_end(out));
}

/* An MBR extended container holds its logical partitions by design. */
static int container_pair(const struct part_entry *a,
			  const struct part_entry *b)
{
	return (a->extended && b->logical) || (a->logical && b->extended);
}

/* An EBR's sector inside its extended container lies there by design. */
static int ebr_in_container(const struct part_entry *a,
			    const struct part_entry *b)
{
	return (a->extended && b->table_area && inside(b, a)) ||
	       (b->extended && a->table_area && inside(a, b));
}

/* A logical partition that no extended container holds. */
static const struct part_entry *homeless_logical(const struct part_table *t)
{
	unsigned int i, j;

	for (i = 0; i < t->n; i++) {
		const struct part_entry *l = &t->entries[i];
		int housed = 0;

		if (!l->logical)
			continue;
		for (j = 0; j < t->n && !housed; j++)
			housed = t->entries[j].extended &&
				 inside(l, &t->entries[j]);
		if (!housed)
			return l;
	}
	return NULL;
}

enum part_problem_kind part_table_check(const struct part_table *t,
					struct part_problem *p)
{
	unsigned int i, j;

	p->kind = PART_FINE;
	p->a = p->b = NULL;
	for (i = 0; i < t->n; i++) {
		const struct part_entry *a = &t->entries[i];

		for (j = i + 1; j < t->n; j++) {
			const struct part_entry *b = &t->entries[j];

			if (!overlap(a, b) || (a->table_area && b->table_area) ||
			    ebr_in_container(a, b))
				continue;
			if (container_pair(a, b)) {
				const struct part_entry *l = a->logical ? a : b;

				if (inside(l, l == a ? b : a))
					continue;
				p->kind = PART_OUTSIDE;
				p->a = l;
				p->b = l == a ? b : a;
				return p->kind;
			}
			p->kind = PART_OVERLAP;
			/* name a partition first, the table's sectors second */
			p->a = a->table_area ? b : a;
			p->b = a->table_area ? a : b;
			return p->kind;
		}
	}
	p->a = homeless_logical(t);
	if (p->a)
		p->kind = PART_OUTSIDE;
	return p->kind;
}

/* "partition 2 (bytes 1048576-2097151)", or the table's own sectors */
static int name_entry(const struct part_entry *e, char *buf, size_t len)
{
	if (e->ebr)
		return snprintf(buf, len, "an EBR of the partition table "
				"(bytes %" PRIu64 "-%" PRIu64 ")",
				e->start_bytes, entry_end(e) - 1);
	if (e->table_area)
		return snprintf(buf, len, "the partition table itself "
				"(bytes %" PRIu64 "-%" PRIu64 ")",
				e->start_bytes, entry_end(e) - 1);
	return snprintf(buf, len, "%spartition %u (bytes %" PRIu64 "-%" PRIu64
			")", e->logical ? "logical " : e->extended ?
			"extended " : "", e->partno, e->start_bytes,
			entry_end(e) - 1);
}

void part_problem_describe(const struct part_problem *p, char *buf,
			   size_t len)
{
	char a[96], b[96];

	if (p->kind == PART_FINE) {
		snprintf(buf, len, "no problem");
		return;
	}
	name_entry(p->a, a, sizeof(a));
	if (p->b)
		name_entry(p->b, b, sizeof(b));
	if (p->kind == PART_OVERLAP)
		snprintf(buf, len, "%s overlaps %s", a, b);
	else if (p->b)
		snprintf(buf, len, "%s reaches outside its container, %s", a, b);
	else
		snprintf(buf, len, "%s lies in no extended container", a);
}
