/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * partition_table.h - a partition table as e2trim keeps it, whoever read
 * it (libblkid, partition_mbr.c, partition_gpt.c), and the check that its
 * entries claim no byte twice
 */
#ifndef E2TRIM_PARTITION_TABLE_H
#define E2TRIM_PARTITION_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* One entry of a partition table, in bytes of the disk or image. */
struct part_entry {
	unsigned int partno;		/* as in /dev/sda<partno>; 0: the table */
	uint64_t start_bytes;
	uint64_t size_bytes;
	unsigned int extended : 1,	/* an MBR extended container */
		     logical : 1,	/* a partition inside one */
		     table_area : 1,	/* the table's own sectors */
		     ebr : 1;		/* that area is an MBR's EBR */
};

/* A whole table: its entries, plus the sectors the table uses. */
struct part_table {
	const char *type;		/* as libblkid names it: "dos", "gpt" ... */
	unsigned int n;
	struct part_entry *entries;	/* in table order */
};

enum part_problem_kind {
	PART_FINE = 0,
	PART_OVERLAP,		/* a and b claim the same bytes */
	PART_OUTSIDE,		/* logical a is not inside container b (or any) */
};

struct part_problem {
	enum part_problem_kind kind;
	const struct part_entry *a, *b;	/* b may be NULL for PART_OUTSIDE */
};

/*
 * The first problem of the whole table, in table order: two entries that
 * overlap (either way round; an entry over the table's own sectors too),
 * or a logical partition outside its extended container.  A logical
 * partition inside its container is not an overlap.  Pure, so that
 * -p N, -p all and the unit tests share it.  Returns the kind found,
 * PART_FINE (0) when there is none.
 */
enum part_problem_kind part_table_check(const struct part_table *t,
					struct part_problem *p);

/* @p in words ("partition 1 (bytes A-B) overlaps partition 2 (...)"). */
void part_problem_describe(const struct part_problem *p, char *buf,
			   size_t len);

#endif /* E2TRIM_PARTITION_TABLE_H */
